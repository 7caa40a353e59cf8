/**
 * The completed-set codec's wire format (version 2, see completed_set.ts): its constants, the
 * 91-character alphabet and the characters-to-bits arithmetic, and the check (32 bits of
 * SHA-256) that binds a string to its topic, partition and committed offset. Shared by the
 * encoder and the decoder.
 *
 * @module
 */
import { hashScratch, sha256First32 } from "./hash.ts";

/** Default budget: the broker's default `offset.metadata.max.bytes`. */
export const DEFAULT_BUDGET = 4096;
/** Longest metadata string encoded or decoded (a budget above it is rejected, a longer string ignored). */
export const MAX_METADATA_LENGTH = 65536;

/** @internal 2^53: offsets and spans stay below it. */
export const LIMIT = 9007199254740992;
/** @internal Format number of the runs payload (version 2; version 1 wrote 0). */
export const FORMAT_RUNS = 2;
/** @internal Format number of the bitmap payload (version 2; version 1 wrote 1). */
export const FORMAT_BITMAP = 3;
/** @internal Format numbers below this are version 1, whose CRC-32 check is no longer trusted. */
export const FIRST_TRUSTED_FORMAT = 2;
/** @internal Bits of the trailing check. */
export const CHECK_BITS = 32;
/** @internal The runs payload's header: first-run flag + two 6-bit codes. */
export const HEADER_BITS = 13;

// ---- alphabet --------------------------------------------------------------------------------

/** @internal The alphabet, by index: `!`…`~` without `"`, `'` and `\`. */
export const ALPHABET: Uint8Array = (() => {
  const a: number[] = [];
  for (let c = 0x21; c <= 0x7e; c++) if (c !== 0x22 && c !== 0x27 && c !== 0x5c) a.push(c);
  return Uint8Array.from(a);
})();
/** @internal A character code's index in the alphabet (−1: outside it), for codes < 128. */
export const INDEX: Int16Array = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET[i]] = i;
  return t;
})();

/** @internal Bits carried by a string of n ≥ 1 characters. */
export function capacityBits(n: number): number {
  return 4 + 13 * ((n - 1) >> 1) + 6 * ((n - 1) & 1);
}

/** @internal The fewest characters whose capacity holds `bits` bits. */
export function charsFor(bits: number): number {
  if (bits <= 4) return 1;
  const rest = bits - 4;
  const pairs = Math.floor(rest / 13);
  const left = rest - 13 * pairs;
  return 1 + 2 * pairs + (left === 0 ? 0 : left <= 6 ? 1 : 2);
}

// ---- the check --------------------------------------------------------------------------------

const TEXT = new TextEncoder();
const HEADER = 19; // format, n, partition, base (hi, lo), topic length
let lastTopic = "";
let lastTopicBytes = new Uint8Array(0);

/**
 * @internal The check of format version 2: the first 32 bits of SHA-256 over the format number
 * (1 byte), n (4 bytes), the partition (4), the base offset (8), the topic's UTF-8 length (2)
 * and bytes, then the first `payloadBits` bits of `buf` packed into bytes (the last one
 * zero-filled), all big-endian.
 */
export function checksum(format: number, n: number, topic: string, partition: number, base: number, buf: Uint8Array, payloadBits: number): number {
  const whole = payloadBits >>> 3;
  const partial = payloadBits & 7;
  if (topic !== lastTopic) {
    lastTopicBytes = TEXT.encode(topic); // a consumer commits few topics: encoded once each time it changes
    lastTopic = topic;
  }
  const topicLength = lastTopicBytes.length;
  const m = hashScratch(HEADER + topicLength + whole + 1);
  m.set(lastTopicBytes, HEADER);
  const hi = Math.floor(base / 4294967296);
  m[0] = format;
  setU32(m, 1, n);
  setU32(m, 5, partition);
  setU32(m, 9, hi);
  setU32(m, 13, base - hi * 4294967296);
  m[17] = (topicLength >>> 8) & 0xff;
  m[18] = topicLength & 0xff;
  let at = HEADER + topicLength;
  m.set(buf.subarray(0, whole), at);
  at += whole;
  if (partial) m[at++] = buf[whole] & (0xff << (8 - partial)) & 0xff; // the check's own bits follow: mask them off
  return sha256First32(m, at);
}

function setU32(b: Uint8Array, at: number, v: number): void {
  b[at] = (v >>> 24) & 0xff;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

// ---- bit access ------------------------------------------------------------------------------

/** @internal Reads n ≤ 24 bits at bit position `at` of `buf` (bits past the buffer read as 0). */
export function readAt(buf: Uint8Array, at: number, n: number): number {
  let v = 0;
  while (n > 0) {
    const byte = buf[at >>> 3] ?? 0;
    const offset = at & 7;
    const avail = 8 - offset;
    const take = avail < n ? avail : n;
    v = v * (1 << take) + ((byte >>> (avail - take)) & ((1 << take) - 1));
    at += take;
    n -= take;
  }
  return v;
}
