/**
 * The completed-set decoder (see completed_set.ts): untrusted input, so every check comes
 * first — the alphabet, the format version, the blocks, the check over the binding — and
 * anything that cannot be verified is ignored with a reason, never trusted; it never throws.
 *
 * @module
 */
import { describe } from "../../errors.ts";
import {
  capacityBits,
  checksum,
  CHECK_BITS,
  FORMAT_BITMAP,
  FIRST_TRUSTED_FORMAT,
  FORMAT_RUNS,
  HEADER_BITS,
  INDEX,
  LIMIT,
  MAX_METADATA_LENGTH,
  readAt,
} from "./wire.ts";
import { BROKEN, PADDING, Reader, readCode } from "./codes.ts";
import { CompletedSet } from "./claim.ts";

/** Why a metadata string was ignored, or the claim it verifiably makes. */
export type DecodeResult = { ok: true; set: CompletedSet } | { ok: false; reason: string };

/** Growable (start, length) pairs. */
class RunList {
  data = new Float64Array(32);
  count = 0;
  push(start: number, length: number): void {
    if (2 * this.count + 2 > this.data.length) {
      const d = new Float64Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[2 * this.count] = start;
    this.data[2 * this.count + 1] = length;
    this.count++;
  }
}

/**
 * Reads back a completed set from a commit's metadata. Returns the claim only when it verifiably
 * belongs to (topic, partition, committedOffset); anything else is ignored with a reason (the
 * records are then redone, never skipped). Never throws.
 *
 * @param topic the topic of the commit
 * @param partition its partition
 * @param committedOffset the committed offset read back with the metadata (number, bigint or decimal string)
 * @param metadata the metadata string (null, undefined and "" mean no claim)
 */
export function decodeCompletedSet(
  topic: string,
  partition: number,
  committedOffset: number | bigint | string,
  metadata: string | null | undefined,
): DecodeResult {
  try {
    return decode(topic, partition, committedOffset, metadata);
  } catch (e) {
    return { ok: false, reason: `undecodable (${e instanceof Error ? e.message : String(e)})` };
  }
}

function decode(topic: string, partition: number, committed: number | bigint | string, metadata: string | null | undefined): DecodeResult {
  if (metadata === null || metadata === undefined || metadata === "") return { ok: false, reason: "empty: no completed set" };
  if (typeof metadata !== "string") return { ok: false, reason: `not a string: ${describe(metadata)}` };
  if (typeof topic !== "string") return { ok: false, reason: `topic is not a string: ${describe(topic)}` };
  if (!Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) return { ok: false, reason: `partition ${describe(partition)} is not in [0, 2^31)` };
  const base = typeof committed === "number" ? committed : typeof committed === "bigint" ? Number(committed) : /^[0-9]{1,16}$/.test(committed) ? Number(committed) : NaN;
  if (!Number.isSafeInteger(base) || base < 0 || (typeof committed === "bigint" && BigInt(base) !== committed)) {
    return { ok: false, reason: `committed offset ${describe(committed)} is not an offset (no commit?)` };
  }
  const n = metadata.length;
  if (n > MAX_METADATA_LENGTH) return { ok: false, reason: `too long: ${n} characters (at most ${MAX_METADATA_LENGTH})` };
  const c0 = metadata.charCodeAt(0);
  const i0 = c0 < 128 ? INDEX[c0] : -1;
  if (i0 < 0) return { ok: false, reason: `not ours: character ${describe(metadata[0])} is outside the alphabet` };
  const format = i0 >> 4;
  if (format < FIRST_TRUSTED_FORMAT) {
    // never read: its CRC-32 is linear, so a string can verify at another committed offset
    return { ok: false, reason: "format version 1 (CRC-32 check) is no longer trusted: its check can verify at another offset" };
  }
  if (format !== FORMAT_RUNS && format !== FORMAT_BITMAP) return { ok: false, reason: `unknown format '${metadata[0]}'` };
  const total = capacityBits(n);
  if (total < CHECK_BITS + 1) return { ok: false, reason: `truncated: ${n} characters cannot hold a check and a claim` };
  const buf = new Uint8Array(((total + 7) >>> 3) + 8);
  buf[0] = (i0 & 15) << 4;
  let bit = 4;
  for (let c = 1; c < n;) {
    const a = metadata.charCodeAt(c);
    const ia = a < 128 ? INDEX[a] : -1;
    if (ia < 0) return { ok: false, reason: `not ours: character ${describe(metadata[c])} at ${c} is outside the alphabet` };
    if (n - c >= 2) {
      const b = metadata.charCodeAt(c + 1);
      const ib = b < 128 ? INDEX[b] : -1;
      if (ib < 0) return { ok: false, reason: `not ours: character ${describe(metadata[c + 1])} at ${c + 1} is outside the alphabet` };
      const v = 91 * ia + ib;
      if (v >= 8192) return { ok: false, reason: `not ours: the pair at ${c} is no 13-bit block` };
      putBits(buf, bit, v, 13);
      bit += 13;
      c += 2;
    } else {
      if (ia >= 64) return { ok: false, reason: `not ours: the last character is no 6-bit block` };
      putBits(buf, bit, ia, 6);
      bit += 6;
      c += 1;
    }
  }
  const payloadBits = total - CHECK_BITS;
  const stored = readAt(buf, payloadBits, 16) * 65536 + readAt(buf, payloadBits + 16, 16);
  if (checksum(format, n, topic, partition, base, buf, payloadBits) !== stored) {
    return { ok: false, reason: "check mismatch: corrupted, truncated, or committed for another topic, partition or offset" };
  }
  const runs = new RunList();
  let end: number;
  if (format === FORMAT_BITMAP) {
    const span = decodeBitmap(buf, payloadBits, base, runs);
    if (span === 0) return { ok: false, reason: "claims nothing: the bitmap has no finished offset" };
    // compared before adding: base + span past 2^53 would round
    if (span > LIMIT - base) return { ok: false, reason: `span: the bitmap passes 2^53 (from base ${base})` };
    end = base + span;
  } else {
    const r = new Reader(buf, payloadBits);
    if (payloadBits < HEADER_BITS) return { ok: false, reason: "truncated: no room for the runs header" };
    let finished = r.bit() === 1;
    const cu = r.bits(6), cf = r.bits(6);
    let at = base;
    end = base;
    let last = -1; // class of the last complete run: 1 finished, 0 unfinished
    for (;;) {
      const v = readCode(r, finished ? cf : cu);
      if (v === PADDING) break;
      if (v === BROKEN) return { ok: false, reason: "truncated: the stream ends inside a run length" };
      const length = v + 1;
      if (length > LIMIT - at) return { ok: false, reason: `span: the runs pass 2^53 (from base ${base})` };
      if (!finished) runs.push(at, length);
      at += length;
      if (finished) end = at;
      last = finished ? 1 : 0;
      finished = !finished;
    }
    if (last === -1) return { ok: false, reason: "claims nothing: no runs" };
    if (last === 0) return { ok: false, reason: "inconsistent: the runs end with an unfinished run" };
  }
  return { ok: true, set: new CompletedSet(base, end, runs.data, runs.count) };
}

function putBits(buf: Uint8Array, at: number, v: number, n: number): void {
  while (n > 0) {
    const free = 8 - (at & 7);
    const take = free < n ? free : n;
    const bits = (v >>> (n - take)) & ((1 << take) - 1);
    buf[at >>> 3] |= bits << (free - take);
    at += take;
    n -= take;
  }
}

/** Unfinished runs of a bitmap of `bits` bits into `runs`; returns the span (one past the last 1 bit), 0 if none. */
function decodeBitmap(buf: Uint8Array, bits: number, base: number, runs: RunList): number {
  let lastOne = -1;
  let zeroStart = 0; // start of the current stretch of zeros
  let i = 0;
  while (i < bits) {
    if ((i & 7) === 0 && i + 8 <= bits) {
      const byte = buf[i >>> 3];
      if (byte === 0) {
        i += 8;
        continue;
      }
      if (byte === 0xff) {
        if (zeroStart < i) runs.push(base + zeroStart, i - zeroStart);
        i += 8;
        zeroStart = i;
        lastOne = i - 1;
        continue;
      }
    }
    if ((buf[i >>> 3] >>> (7 - (i & 7))) & 1) {
      if (zeroStart < i) runs.push(base + zeroStart, i - zeroStart);
      zeroStart = i + 1;
      lastOne = i;
    }
    i++;
  }
  return lastOne + 1;
}
