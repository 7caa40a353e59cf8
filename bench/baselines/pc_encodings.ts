/**
 * Baseline: Confluent Parallel Consumer 0.5.3.3's offset-map encodings, re-implemented from its
 * sources (tag 0.5.3.3 of confluentinc/parallel-consumer), read in
 * `parallel-consumer-core/src/main/java/io/confluent/parallelconsumer/`:
 * - `offsets/OffsetMapCodecManager.java` — `encodeOffsetsCompressed`: the smallest encoding
 *   wins (`packSmallest`), then base64 (`OffsetSimpleSerialisation.base64`, standard alphabet
 *   with padding); `DefaultMaxMetadataSize = 4096`;
 * - `offsets/OffsetSimultaneousEncoder.java` — one loop over **every offset** of
 *   [base, highest succeeded] (`range(lengthBetweenBaseAndHighOffset)`, a `contains` on the
 *   incomplete set per offset), feeding all encoders; encoders that overflow are dropped;
 *   `packEncoding`: one magic byte, then the encoder's bytes;
 * - `offsets/OffsetEncoding.java` — magic bytes: BitSet `l`, BitSetV2 `o`, RunLength `n`,
 *   RunLengthV2 `e` (their zstd variants `a`, `s`, `J`, `p`);
 * - `offsets/BitSetEncoder.java` — v1: a 2-byte (short) bit count, at most 32,767 bits; v2: a
 *   4-byte (int) count; then `ceil(bits / 8)` bytes of `java.util.BitSet` data (little-endian
 *   bit order, bit set = complete) and one unused trailing byte (`wrappedBufferLength =
 *   lengthEntryWidth + bytesRequiredForEntries + 1`);
 * - `offsets/RunLengthEncoder.java` — alternating run lengths starting with an *incomplete* run
 *   (0 when the base is complete), big-endian shorts (v1: a run above 32,767 drops the
 *   encoder) or ints (v2);
 * - `offsets/OffsetEncoder.java`, `offsets/EncodedOffsetPair.java` — sizes compared by byte
 *   length; zstd variants are registered only when no encoding is under 200 bytes;
 * - `state/PartitionState.java` — the committed offset is the lowest incomplete offset
 *   (`getOffsetToCommit` = highest sequential succeeded + 1); no metadata when nothing is
 *   incomplete; a payload longer than 4,096 characters is dropped ("Offset map data too large
 *   … Warning: messages might be replayed on rebalance"), and above 75 % of it the partition
 *   takes no more records (back-pressure).
 * Not re-implemented: the zstd variants (registered when every plain encoding is ≥ 200
 * bytes; Node 20 has no zstd) — {@link pcDeflateStandIn} gives a deflate figure as a rough
 * stand-in — and the long-dead ByteArray encoding.
 *
 * @module
 */

/** Which PC encoding won, its bytes (magic included) and the metadata string. */
export interface PcEncoded {
  /** `BitSet`, `BitSetV2`, `RunLength`, `RunLengthV2`. */
  encoding: string;
  /** Magic byte + the encoder's bytes. */
  bytes: Uint8Array;
  /** base64 of `bytes`. */
  metadata: string;
  /** Whether PC would send it: length ≤ 4,096; otherwise the map is dropped. */
  sent: boolean;
}

/** PC's cap on the metadata string. */
export const PC_MAX_METADATA = 4096;
const SHORT_MAX = 32767;
const INT_MAX = 2147483647;

/** base64 (standard alphabet, `=` padding), as `java.util.Base64.getEncoder()`. */
export function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** base64 length of n bytes. */
export const base64Length = (n: number): number => 4 * Math.ceil(n / 3);

/**
 * PC's encoder as it runs: one pass over every offset of [base, highestSucceeded], every
 * encoder fed per offset, the smallest result wins. `incomplete` holds the incomplete offsets
 * below the highest succeeded one (PC's `getIncompleteOffsetsBelowHighestSucceeded`).
 * Returns `undefined` when nothing is incomplete (PC then commits without metadata).
 */
export function pcEncode(base: number, highestSucceeded: number, incomplete: ReadonlySet<number>): PcEncoded | undefined {
  if (incomplete.size === 0) return undefined;
  if (highestSucceeded < base - 1) highestSucceeded = base - 1; // maybeRaiseOffsetHighestSucceeded
  const length = highestSucceeded - base + 1;
  // encoders (BitSet v1 fails at serialise when length > Short.MAX_VALUE; BitSet needs an int length)
  const bitset = length <= INT_MAX ? new Uint8Array(Math.ceil(length / 8)) : undefined;
  const rl1: number[] = [], rl2: number[] = [];
  let rl1Ok = true;
  let run = 0, state = false; // RunLengthEncoder: currentRunLengthSize, previousRunLengthState
  for (let rel = 0; rel < length; rel++) {
    const isIncomplete = incomplete.has(base + rel);
    if (bitset && !isIncomplete) bitset[rel >>> 3] |= 1 << (rel & 7); // java.util.BitSet.toByteArray order
    const complete = !isIncomplete;
    if (state === complete) {
      run += 1;
      if (run > SHORT_MAX) rl1Ok = false; // v1 throws RunLengthV1EncodingNotSupported: encoder removed
      if (run > INT_MAX) return undefined; // v2 would be removed too: nothing left but BitSet (not reached here)
    } else {
      state = complete;
      if (rl1Ok) rl1.push(run);
      rl2.push(run);
      run = 1;
    }
  }
  if (rl1Ok) rl1.push(run);
  rl2.push(run);
  const candidates: { encoding: string; bytes: Uint8Array }[] = [];
  if (bitset && length <= SHORT_MAX) candidates.push({ encoding: "BitSet", bytes: wrapBitSet(0x6c, 2, length, bitset) });
  if (bitset) candidates.push({ encoding: "BitSetV2", bytes: wrapBitSet(0x6f, 4, length, bitset) });
  if (rl1Ok) candidates.push({ encoding: "RunLength", bytes: wrapRuns(0x6e, 2, rl1) });
  candidates.push({ encoding: "RunLengthV2", bytes: wrapRuns(0x65, 4, rl2) });
  let best = candidates[0];
  for (const c of candidates) if (c.bytes.length < best.bytes.length) best = c;
  const metadata = base64(best.bytes);
  return { ...best, metadata, sent: metadata.length <= PC_MAX_METADATA };
}

function wrapBitSet(magic: number, width: number, length: number, bits: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + width + bits.length + 1);
  out[0] = magic;
  const view = new DataView(out.buffer);
  if (width === 2) view.setInt16(1, length);
  else view.setInt32(1, length);
  out.set(bits, 1 + width);
  return out;
}

function wrapRuns(magic: number, width: number, runs: number[]): Uint8Array {
  const out = new Uint8Array(1 + width * runs.length);
  out[0] = magic;
  const view = new DataView(out.buffer);
  for (let i = 0; i < runs.length; i++) {
    if (width === 2) view.setInt16(1 + 2 * i, runs[i]);
    else view.setInt32(1 + 4 * i, runs[i]);
  }
  return out;
}

/**
 * The same bytes as {@link pcEncode}, built from the unfinished runs of [base, end)
 * (end = highest succeeded + 1) in O(runs) plus the bitmap's bytes: for ranges too long for
 * PC's per-offset loop. `runs` are (start, length) pairs, sorted, disjoint, maximal. Returns
 * `undefined` when every encoder overflows (PC: NoEncodingPossibleException, no metadata).
 */
export function pcEncodeFromRuns(base: number, end: number, runs: Float64Array, count: number): PcEncoded | undefined {
  const length = end - base;
  // the run list starts with an incomplete run (0 if base is complete), alternates, ends with the tail
  const list: number[] = [];
  let at = base;
  if (count === 0 || runs[0] > base) list.push(0);
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i], l = runs[2 * i + 1];
    if (s > at) list.push(s - at);
    list.push(l);
    at = s + l;
  }
  if (end > at) list.push(end - at);
  const maxRun = list.reduce((m, x) => Math.max(m, x), 0);
  const candidates: { encoding: string; bytes: Uint8Array }[] = [];
  if (length <= INT_MAX) {
    const bits = new Uint8Array(Math.ceil(length / 8));
    let from = 0;
    const ones = (a: number, b: number): void => {
      for (let i = a; i < b; i++) bits[i >>> 3] |= 1 << (i & 7);
    };
    for (let i = 0; i < count; i++) {
      ones(from, runs[2 * i] - base);
      from = runs[2 * i] + runs[2 * i + 1] - base;
    }
    ones(from, length);
    if (length <= SHORT_MAX) candidates.push({ encoding: "BitSet", bytes: wrapBitSet(0x6c, 2, length, bits) });
    candidates.push({ encoding: "BitSetV2", bytes: wrapBitSet(0x6f, 4, length, bits) });
  }
  if (maxRun <= SHORT_MAX) candidates.push({ encoding: "RunLength", bytes: wrapRuns(0x6e, 2, list) });
  if (maxRun <= INT_MAX) candidates.push({ encoding: "RunLengthV2", bytes: wrapRuns(0x65, 4, list) });
  if (candidates.length === 0) return undefined;
  let best = candidates[0];
  for (const c of candidates) if (c.bytes.length < best.bytes.length) best = c;
  const metadata = base64(best.bytes);
  return { ...best, metadata, sent: metadata.length <= PC_MAX_METADATA };
}

/**
 * A stand-in for PC's zstd variants (not re-implemented): the size, in base64 characters, of
 * `deflate` applied to the winning encoding's bytes (magic byte kept outside), given a
 * compressor. zstd and deflate differ by some percent on such data; this is an indication only.
 */
export function pcDeflateStandIn(bytes: Uint8Array, deflate: (b: Uint8Array) => Uint8Array): number {
  return base64Length(1 + deflate(bytes.subarray(1)).length);
}
