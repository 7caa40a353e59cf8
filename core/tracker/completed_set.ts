/**
 * The completed-set codec: which records above the committed offset are already finished,
 * written into a commit's metadata string, so that the next owner of a partition skips them
 * instead of redoing them.
 *
 * ## Model
 *
 * A claim is bound to (topic, partition, base) where `base` is the committed offset. It covers
 * [base, end): inside it every offset is finished except those in a sorted list of disjoint
 * *unfinished runs*; every offset ≥ end (or < base) is unknown, i.e. unfinished. Offsets that
 * were never delivered (compaction, transaction markers) count as finished. `base` itself may
 * be finished or not.
 *
 * ## Format (version 1)
 *
 * Alphabet: the 91 printable ASCII characters `!`…`~` without `"`, `'` and `\` (no space), in
 * ASCII order; a character's *index* is its position in that list.
 *
 * The string `c0 c1 … c(n−1)` carries a bit stream (most significant bit first):
 * - `c0` has index `16·F + h` with F the format (0 = runs, 1 = bitmap) and h the stream's first
 *   4 bits. An index ≥ 32 is an unknown format (room for later versions): ignored, with a reason.
 * - then each pair `c(2i+1) c(2i+2)` is `13` bits, value `91·index₁ + index₂` (< 8192, so
 *   6.5 bits per character against base64's 6); a single last character is 6 bits (index < 64).
 * So n characters carry T(n) = 4 + 13·⌊(n−1)/2⌋ + 6·((n−1) mod 2) bits; the encoder uses the
 * smallest n whose T(n) holds its bits. There is no length field: the string's length tells.
 * - the **last 32 bits** are a CRC-32 (IEEE) over: the format number (1 byte), n (4 bytes), the
 *   partition (4 bytes), the base offset (8 bytes), the topic's UTF-8 length (2 bytes) and
 *   bytes, then the payload (the first T(n) − 32 bits, packed into bytes, zero-filled). The base
 *   is not written anywhere else: the decoder knows the committed offset, and a set read back
 *   with another offset, topic or partition, or corrupted, truncated, bit-flipped, fails the
 *   check and is ignored.
 * - the **payload**: the encoding's bits, then zero padding (fewer than 7 bits). Zero padding
 *   can never complete a code (below), so it never decodes into a claim.
 *
 * Payload of format 0, **runs**: the alternating runs of [base, end), finished and unfinished,
 * each length ≥ 1, the last one finished (a trailing unfinished run is left out: beyond `end`
 * everything is unfinished anyway).
 * - 1 bit: the first run (the one at `base`) is finished (1) or unfinished (0);
 * - 6 bits: the code of the unfinished runs' lengths, 6 bits: the code of the finished runs';
 *   code c < 32 is Exp-Golomb of order c, code c ≥ 32 is Golomb-Rice of order c − 32;
 * - the runs' lengths minus 1, alternating, each with its class's code. Exp-Golomb of order k
 *   writes v + 2^k (N bits) after N − 1 − k zeros; Rice of order k writes ⌊v / 2^k⌋ zeros, a 1,
 *   then the low k bits. Both start with zeros and a 1, so an all-zero tail never completes one.
 * The encoder tallies, in one pass over the runs, the exact size of every code for each class
 * (a histogram of bit lengths for Exp-Golomb, of set bits for Rice) and takes the smallest.
 *
 * Payload of format 1, **bitmap**: bit i = 1 when base + i is finished, for i in [0, end − base);
 * trailing zeros (padding included) are unfinished, so they are harmless. `end` is read back as
 * one past the last 1 bit.
 *
 * Per commit the smaller of the two wins. Over the budget (the broker's
 * `offset.metadata.max.bytes`, 4,096 by default, limits the metadata's length), the set is not
 * dropped: the longest prefix [base, end′) that fits is encoded, in whichever format keeps the
 * most finished records; everything ≥ end′ is then unfinished (redone by the next owner).
 *
 * ## Decoding
 *
 * Untrusted input: anything that cannot be verified is ignored (`ok: false` with a reason), never
 * trusted, and decoding never throws. The checksum guards against accidents (a corrupted, cut or
 * stale string, one written for another partition or offset, another tool's metadata), not
 * against someone who can commit for the group on purpose: they could commit any offset anyway. It is bounded: at most {@link MAX_METADATA_LENGTH}
 * characters, the run count is bounded by the payload's bits, the span by 2^53.
 *
 * @example
 * ```ts
 * import { decodeCompletedSet, encodeCompletedSet } from "offset-frontier/tracker";
 * // committed offset 100; 100 and 103..104 unfinished, 101..102 and 105..109 finished
 * const runs = new Float64Array([100, 1, 103, 2]);
 * const e = encodeCompletedSet("orders", 0, { base: 100, end: 110, runs, count: 2 });
 * // e.metadata is a short ASCII string, e.end === 110, e.finished === 7
 * const d = decodeCompletedSet("orders", 0, 100, e?.metadata);
 * if (d.ok) d.set.isFinished(101); // true
 * ```
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../errors.ts";

/** Unfinished runs: pairs (startOffset, length) in `runs[0..2·count)`, sorted, disjoint, length ≥ 1, inside [base, end). */
export interface RunsInput {
  /** The committed offset the claim is bound to. */
  base: number;
  /** One past the last offset the claim covers (everything ≥ end is unfinished). */
  end: number;
  /** The unfinished runs as (start, length) pairs. */
  runs: Float64Array;
  /** How many pairs of `runs` to read. */
  count: number;
}

/** Options of {@link encodeCompletedSet}. */
export interface EncodeOptions {
  /** Maximum length of the metadata string in characters; default 4,096 (the broker's `offset.metadata.max.bytes`). */
  budget?: number;
}

/** What {@link encodeCompletedSet} produced. */
export interface Encoded {
  /** The metadata string (printable ASCII, at most the budget). */
  metadata: string;
  /**
   * One past the last offset it claims anything about: the input's `end` (less a trailing
   * unfinished run, which says nothing: one past the last finished offset), or less when over
   * the budget. The decoded set's `end` is the same.
   */
  end: number;
  /** How many offsets of [base, end) it claims finished (gaps included). */
  finished: number;
  /** The encoding that won: `"bitmap"` or `"runs:<unfinished code>/<finished code>"` (e.g. `runs:eg0/rice2`). */
  format: string;
}

/** Why a metadata string was ignored, or the claim it verifiably makes. */
export type DecodeResult = { ok: true; set: CompletedSet } | { ok: false; reason: string };

/** Default budget: the broker's default `offset.metadata.max.bytes`. */
export const DEFAULT_BUDGET = 4096;
/** Longest metadata string encoded or decoded (a budget above it is rejected, a longer string ignored). */
export const MAX_METADATA_LENGTH = 65536;

const LIMIT = 9007199254740992; // 2^53
const FORMAT_RUNS = 0;
const FORMAT_BITMAP = 1;
const CRC_BITS = 32;
const HEADER_BITS = 13; // runs: first-run flag + two 6-bit codes
const CODES = 32; // orders 0..31 for each family
const MAX_BITLEN = 56; // bit lengths of values < 2^55
const SMALL = 64; // values counted one by one before they are tallied

// ---- alphabet --------------------------------------------------------------------------------

const ALPHABET: Uint8Array = (() => {
  const a: number[] = [];
  for (let c = 0x21; c <= 0x7e; c++) if (c !== 0x22 && c !== 0x27 && c !== 0x5c) a.push(c);
  return Uint8Array.from(a);
})();
const INDEX: Int16Array = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET[i]] = i;
  return t;
})();

/** Bits carried by a string of n ≥ 1 characters. */
function capacityBits(n: number): number {
  return 4 + 13 * ((n - 1) >> 1) + 6 * ((n - 1) & 1);
}

/** The fewest characters whose capacity holds `bits` bits. */
function charsFor(bits: number): number {
  if (bits <= 4) return 1;
  const rest = bits - 4;
  const pairs = Math.floor(rest / 13);
  const left = rest - 13 * pairs;
  return 1 + 2 * pairs + (left === 0 ? 0 : left <= 6 ? 1 : 2);
}

// ---- CRC-32 ----------------------------------------------------------------------------------

const CRC_TABLE: Int32Array = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

function crcBytes(crc: number, bytes: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return crc;
}

const TEXT = new TextEncoder();
const header = new Uint8Array(19);
let topicBytes = new Uint8Array(256);

/** CRC-32 of the binding header and the first `payloadBits` bits of `buf`. */
function checksum(format: number, n: number, topic: string, partition: number, base: number, buf: Uint8Array, payloadBits: number): number {
  if (topicBytes.length < topic.length * 3) topicBytes = new Uint8Array(topic.length * 3);
  const topicLength = TEXT.encodeInto(topic, topicBytes).written;
  const hi = Math.floor(base / 4294967296);
  const lo = base - hi * 4294967296;
  header[0] = format;
  setU32(header, 1, n);
  setU32(header, 5, partition);
  setU32(header, 9, hi);
  setU32(header, 13, lo);
  header[17] = (topicLength >>> 8) & 0xff;
  header[18] = topicLength & 0xff;
  let crc = -1;
  crc = crcBytes(crc, header, 0, 19);
  crc = crcBytes(crc, topicBytes, 0, topicLength);
  const whole = payloadBits >>> 3;
  crc = crcBytes(crc, buf, 0, whole);
  const partial = payloadBits & 7;
  if (partial) {
    const last = buf[whole] & (0xff << (8 - partial)) & 0xff; // the CRC's own bits follow: mask them off
    crc = CRC_TABLE[(crc ^ last) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ -1) >>> 0;
}

function setU32(b: Uint8Array, at: number, v: number): void {
  b[at] = (v >>> 24) & 0xff;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

// ---- bits ------------------------------------------------------------------------------------

const POW2: Float64Array = (() => {
  const p = new Float64Array(64);
  for (let i = 0; i < 64; i++) p[i] = 2 ** i;
  return p;
})();

/** Number of bits of x, an integer in [0, 2^55). */
function bitLength(x: number): number {
  return x < 4294967296 ? 32 - Math.clz32(x) : 64 - Math.clz32(Math.floor(x / 4294967296));
}

/** A bit writer over a zeroed scratch buffer (most significant bit first). */
class BitWriter {
  buf = new Uint8Array(1024);
  pos = 0;

  /** Zeroes the first `bytes` bytes (growing the buffer if needed) and rewinds. */
  reset(bytes: number): void {
    if (this.buf.length < bytes) this.buf = new Uint8Array(Math.max(bytes, this.buf.length * 2));
    else this.buf.fill(0, 0, bytes);
    this.pos = 0;
  }

  /** Writes the low n ≤ 24 bits of v. */
  small(v: number, n: number): void {
    const buf = this.buf;
    let pos = this.pos;
    while (n > 0) {
      const free = 8 - (pos & 7);
      const take = free < n ? free : n;
      const bits = (v >>> (n - take)) & ((1 << take) - 1);
      buf[pos >>> 3] |= bits << (free - take);
      pos += take;
      n -= take;
    }
    this.pos = pos;
  }

  /** Writes v (an integer < 2^n) in n ≤ 60 bits. */
  bits(v: number, n: number): void {
    if (n > 24) {
      const hi = Math.floor(v / 16777216);
      this.bits(hi, n - 24);
      this.small(v - hi * 16777216, 24);
    } else this.small(v, n);
  }

  /** Sets the bits [from, to) to 1. */
  ones(from: number, to: number): void {
    const buf = this.buf;
    while (from < to && (from & 7) !== 0) {
      buf[from >>> 3] |= 0x80 >>> (from & 7);
      from++;
    }
    const fullEnd = from + ((to - from) & ~7);
    if (fullEnd > from) buf.fill(0xff, from >>> 3, fullEnd >>> 3);
    for (from = fullEnd; from < to; from++) buf[from >>> 3] |= 0x80 >>> (from & 7);
  }

  /** Writes v with code `code` (Exp-Golomb below 32, Rice from 32). */
  code(v: number, code: number): void {
    if (code < CODES) {
      const x = v + POW2[code];
      const len = bitLength(x);
      this.pos += len - 1 - code; // zeros (the buffer is zeroed)
      if (len > 24) this.bits(x, len);
      else this.small(x, len);
    } else {
      const k = code - CODES;
      if (k === 0) {
        this.pos += v;
        this.small(1, 1);
        return;
      }
      const q = Math.floor(v / POW2[k]);
      this.pos += q;
      if (k < 24) this.small(POW2[k] + (v - q * POW2[k]), k + 1); // the 1, then k low bits
      else {
        this.small(1, 1);
        this.bits(v - q * POW2[k], k);
      }
    }
  }
}

const W = new BitWriter();

/** Bits of code `code` for value v. */
function codeLength(v: number, code: number): number {
  if (code < CODES) return 2 * bitLength(v + POW2[code]) - code - 1;
  const k = code - CODES;
  return Math.floor(v / POW2[k]) + 1 + k;
}

/** The largest v whose code takes at most r bits (−1 if none). */
function largestFitting(r: number, code: number): number {
  if (code < CODES) {
    const m = Math.floor((r + code + 1) / 2);
    return m < code + 1 ? -1 : POW2[Math.min(m, 62)] - POW2[code] - 1;
  }
  const k = code - CODES;
  return r < k + 1 ? -1 : (r - k) * POW2[k] - 1;
}

function codeName(code: number): string {
  return code < CODES ? `eg${code}` : `rice${code - CODES}`;
}

// ---- code choice: exact sizes of every code in one pass ---------------------------------------

/** Per-class tallies from which the size of every code follows exactly. */
class Tally {
  count = 0;
  /** the largest value */
  max = 0;
  /** values by bit length */
  readonly byLength = new Float64Array(MAX_BITLEN + 1);
  /** +2 over the orders k where v + 2^k gains a bit (a difference array over k) */
  readonly carry = new Float64Array(CODES + 1);
  /** how many values have bit j set */
  readonly bits = new Float64Array(MAX_BITLEN);

  /** values below SMALL, counted by value; folded into the tallies above by `choose` */
  readonly small = new Float64Array(SMALL);

  reset(): void {
    this.count = 0;
    this.max = 0;
    this.byLength.fill(0);
    this.carry.fill(0);
    this.bits.fill(0);
    this.small.fill(0);
  }

  add(v: number): void {
    this.count++;
    if (v > this.max) this.max = v;
    if (v < SMALL) this.small[v]++; // most run lengths: one increment, folded in later
    else this.#tally(v, 1);
  }

  /** Tallies `times` values v. */
  #tally(v: number, times: number): void {
    const b = bitLength(v);
    this.byLength[b] += times;
    // EG order k < b: v + 2^k has b + 1 bits iff bits k..b−1 of v are all ones, i.e. k ≥ b − t
    // where t counts v's leading ones.
    if (b > 0) {
      const t = b - bitLength(POW2[b] - 1 - v);
      const from = b - t;
      if (from < CODES) {
        this.carry[from] += 2 * times;
        this.carry[b < CODES ? b : CODES] -= 2 * times;
      }
    }
    let hi = Math.floor(v / 4294967296);
    let lo = (v - hi * 4294967296) >>> 0;
    while (lo !== 0) {
      const low = lo & -lo;
      this.bits[31 - Math.clz32(low)] += times;
      lo = (lo ^ low) >>> 0;
    }
    while (hi !== 0) {
      const low = hi & -hi;
      this.bits[63 - Math.clz32(low)] += times;
      hi = (hi ^ low) >>> 0;
    }
  }

  /** The smallest code and its total size in bits, into `best`. */
  choose(best: { code: number; size: number }): void {
    best.code = 0;
    best.size = Infinity;
    if (this.count === 0) {
      best.size = 0;
      return;
    }
    const small = this.small;
    for (let v = 0; v < SMALL; v++) {
      if (small[v] !== 0) {
        this.#tally(v, small[v]);
        small[v] = 0;
      }
    }
    const top = bitLength(this.max); // every value has at most `top` bits
    let low = 0;
    while (this.byLength[low] === 0) low++;
    // orders above top + 1 only cost more (every value then takes k + 1 bits, or 1 + k)
    const kMax = Math.min(CODES - 1, top + 1);
    let carry = 0;
    for (let k = 0; k <= kMax; k++) {
      carry += this.carry[k];
      if (this.max + POW2[k] > LIMIT) break; // v + 2^k must stay exact (larger k only cost more here)
      let eg = carry;
      for (let b = low; b <= top; b++) {
        const c = this.byLength[b];
        if (c !== 0) eg += c * (k >= b ? k + 1 : 2 * b - 1 - k);
      }
      if (eg < best.size) {
        best.size = eg;
        best.code = k;
      }
      let rice = this.count * (1 + k);
      for (let j = k; j < top; j++) if (this.bits[j] !== 0) rice += this.bits[j] * POW2[j - k];
      if (rice < best.size) {
        best.size = rice;
        best.code = CODES + k;
      }
    }
  }
}

const tallyU = new Tally();
const tallyF = new Tally();
const bestU = { code: 0, size: 0 };
const bestF = { code: 0, size: 0 };

// ---- the input, normalised -------------------------------------------------------------------

let scratchRuns = new Float64Array(64);

/** The validated input (runs merged into `scratchRuns` where some touched), set by `normalise`. */
const norm: { base: number; end: number; runs: Float64Array; count: number } = { base: 0, end: 0, runs: scratchRuns, count: 0 };

/** Validates the input (throwing a typed error naming the value) and sets `norm`. */
function normalise(input: RunsInput): void {
  if (input === null || typeof input !== "object") throw new InvalidArgumentError(`input must be { base, end, runs, count }; got ${describe(input)}`);
  const { base, end, runs, count } = input;
  if (!Number.isSafeInteger(base) || base < 0) throw new InvalidArgumentError(`input.base must be an integer in [0, 2^53); got ${describe(base)}`);
  if (!Number.isSafeInteger(end) || end < base || end > LIMIT) throw new InvalidArgumentError(`input.end must be an integer in [base = ${base}, 2^53]; got ${describe(end)}`);
  if (!(runs instanceof Float64Array)) throw new InvalidArgumentError(`input.runs must be a Float64Array; got ${describe(runs)}`);
  if (!Number.isSafeInteger(count) || count < 0 || 2 * count > runs.length) {
    throw new InvalidArgumentError(`input.count must be an integer in [0, runs.length / 2 = ${runs.length >> 1}]; got ${describe(count)}`);
  }
  let prevEnd = base;
  let touching = false;
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i], l = runs[2 * i + 1];
    if (!Number.isSafeInteger(s) || s < prevEnd) {
      throw new InvalidArgumentError(`input.runs[${2 * i}] (start of run ${i}) must be an integer ≥ ${prevEnd} (sorted, disjoint, ≥ base); got ${describe(s)}`);
    }
    if (!Number.isSafeInteger(l) || l < 1 || s + l > end) {
      throw new InvalidArgumentError(`input.runs[${2 * i + 1}] (length of run ${i} at ${s}) must be an integer in [1, end − start = ${end - s}]; got ${describe(l)}`);
    }
    if (i > 0 && s === prevEnd) touching = true;
    prevEnd = s + l;
  }
  norm.base = base;
  norm.end = end;
  norm.runs = runs;
  norm.count = count;
  if (touching) {
    if (scratchRuns.length < 2 * count) scratchRuns = new Float64Array(2 * count);
    let m = 0;
    for (let i = 0; i < count; i++) {
      const s = runs[2 * i], l = runs[2 * i + 1];
      if (m > 0 && scratchRuns[2 * m - 2] + scratchRuns[2 * m - 1] === s) scratchRuns[2 * m - 1] += l;
      else {
        scratchRuns[2 * m] = s;
        scratchRuns[2 * m + 1] = l;
        m++;
      }
    }
    norm.runs = scratchRuns;
    norm.count = m;
  }
  // a trailing unfinished run says nothing: beyond `end` everything is unfinished anyway
  if (norm.count > 0) {
    const i = norm.count - 1;
    if (norm.runs[2 * i] + norm.runs[2 * i + 1] === norm.end) {
      norm.end = norm.runs[2 * i];
      norm.count--;
    }
  }
}

// The virtual run sequence of the normalised input: [F_head if the first run is finished], then
// U_0, F_0, U_1, F_1, …, U_{m−1}, F_{m−1}; F_i runs from the end of U_i to the next start (or end).

/** Tallies the runs that start before `cut` (all when cut ≥ end). */
function tallyRuns(cut: number): void {
  tallyU.reset();
  tallyF.reset();
  const { base, end, runs, count } = norm;
  const first = count > 0 ? runs[0] : end;
  if (first > base) tallyF.add(first - base - 1);
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    const l = runs[2 * i + 1];
    tallyU.add(l - 1);
    const fs = s + l;
    if (fs >= cut) break;
    const fe = i + 1 < count ? runs[2 * i + 2] : end;
    tallyF.add(fe - fs - 1);
  }
}

/** Where the runs format, with codes (cu, cf), must stop to fit `capacity` payload bits; −1 if nothing fits. */
function runsCut(cu: number, cf: number, capacity: number): number {
  const { base, end, runs, count } = norm;
  let used = HEADER_BITS;
  let reached = -1;
  const first = count > 0 ? runs[0] : end;
  if (first > base) {
    const v = first - base - 1;
    const c = codeLength(v, cf);
    if (used + c > capacity) {
      const fit = Math.min(largestFitting(capacity - used, cf), v);
      return fit < 0 ? -1 : base + fit + 1;
    }
    used += c;
    reached = first;
  }
  for (let i = 0; i < count; i++) {
    const l = runs[2 * i + 1];
    used += codeLength(l - 1, cu);
    if (used > capacity) return reached;
    const fs = runs[2 * i] + l;
    const fe = i + 1 < count ? runs[2 * i + 2] : end;
    const v = fe - fs - 1;
    const c = codeLength(v, cf);
    if (used + c > capacity) {
      const fit = Math.min(largestFitting(capacity - used, cf), v);
      return fit < 0 ? reached : fs + fit + 1;
    }
    used += c;
    reached = fe;
  }
  return reached;
}

/** Where the bitmap must stop to fit `capacity` payload bits (trimmed to a finished offset); −1 if nothing. */
function bitmapCut(capacity: number): number {
  const { base, end, runs, count } = norm;
  let cut = Math.min(end, base + capacity);
  // cut inside or right after an unfinished run: trim to its start
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    if (s + runs[2 * i + 1] >= cut) {
      cut = s;
      break;
    }
  }
  return cut > base ? cut : -1;
}

/** Finished offsets of [base, cut). */
function finishedBelow(cut: number): number {
  const { base, runs, count } = norm;
  let unfinished = 0;
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    unfinished += Math.min(runs[2 * i + 1], cut - s);
  }
  return cut - base - unfinished;
}

// ---- encode ----------------------------------------------------------------------------------

/** Writes the runs payload for [base, cut) with codes (cu, cf). */
function writeRuns(cu: number, cf: number, cut: number): void {
  const { base, runs, count } = norm;
  const first = count > 0 ? runs[0] : norm.end;
  W.small(first > base ? 1 : 0, 1);
  W.small(cu, 6);
  W.small(cf, 6);
  if (first > base) {
    W.code(Math.min(first, cut) - base - 1, cf);
    if (first >= cut) return;
  }
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) return;
    const l = runs[2 * i + 1];
    W.code(l - 1, cu);
    const fs = s + l;
    const fe = i + 1 < count ? runs[2 * i + 2] : norm.end;
    W.code(Math.min(fe, cut) - fs - 1, cf);
    if (fe >= cut) return;
  }
}

/** Writes the bitmap payload for [base, cut). */
function writeBitmap(cut: number): void {
  const { base, runs, count } = norm;
  let at = base;
  for (let i = 0; i < count && at < cut; i++) {
    const s = runs[2 * i];
    W.ones(at - base, Math.min(s, cut) - base);
    at = s + runs[2 * i + 1];
  }
  if (at < cut) W.ones(at - base, cut - base);
  W.pos = cut - base;
}

const outChars = new Uint8Array(MAX_METADATA_LENGTH);
const DECODER = new TextDecoder("latin1");

/** Turns the writer's bits (payload then padding up to the CRC) into the string. */
function finish(format: number, topic: string, partition: number, base: number, payloadBits: number): string {
  const n = charsFor(payloadBits + CRC_BITS);
  const total = capacityBits(n);
  const padded = total - CRC_BITS;
  const wbuf = W.buf;
  const crc = checksum(format, n, topic, partition, base, wbuf, padded);
  W.pos = padded;
  W.bits(crc, 32);
  // characters: c0 = 16·format + first 4 bits, then 13-bit pairs, then a 6-bit single
  outChars[0] = ALPHABET[16 * format + (wbuf[0] >>> 4)];
  let bit = 4;
  let c = 1;
  while (c < n) {
    if (n - c >= 2) {
      const v = readAt(wbuf, bit, 13);
      bit += 13;
      const hi = Math.floor(v / 91);
      outChars[c++] = ALPHABET[hi];
      outChars[c++] = ALPHABET[v - 91 * hi];
    } else {
      outChars[c++] = ALPHABET[readAt(wbuf, bit, 6)];
      bit += 6;
    }
  }
  // short strings: fromCharCode is cheaper than a TextDecoder call
  return n <= 2048 ? String.fromCharCode.apply(null, outChars.subarray(0, n) as unknown as number[]) : DECODER.decode(outChars.subarray(0, n));
}

/** Reads n ≤ 24 bits at bit position `at` of `buf` (bits past the buffer read as 0). */
function readAt(buf: Uint8Array, at: number, n: number): number {
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

/**
 * Encodes the finished offsets of [base, end) for a commit of offset `base` on (topic, partition).
 * If the whole set does not fit the budget, encodes the longest prefix [base, end′) that fits
 * (end′ ≤ end; everything ≥ end′ then counts as unfinished). Works on the runs (O(runs)), never
 * per offset; a bitmap is written a byte at a time.
 *
 * @param topic the topic (bound by the checksum)
 * @param partition the partition, an integer in [0, 2^31)
 * @param input the committed offset (`base`), `end` and the unfinished runs
 * @param options `budget`: the longest string allowed (default 4,096)
 * @returns the metadata and what it claims, or `undefined` when nothing above base is finished
 *   (or nothing fits the budget)
 * @throws {InvalidArgumentError} for a malformed input (naming the value), a partition or budget out of range
 */
export function encodeCompletedSet(topic: string, partition: number, input: RunsInput, options?: EncodeOptions): Encoded | undefined {
  if (typeof topic !== "string") throw new InvalidArgumentError(`topic must be a string; got ${describe(topic)}`);
  if (!Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new InvalidArgumentError(`partition must be an integer in [0, 2^31); got ${describe(partition)}`);
  }
  const budget = options?.budget ?? DEFAULT_BUDGET;
  if (!Number.isInteger(budget) || budget < 1 || budget > MAX_METADATA_LENGTH) {
    throw new InvalidArgumentError(`options.budget must be an integer in [1, ${MAX_METADATA_LENGTH}]; got ${describe(budget)}`);
  }
  normalise(input);
  const { base, end } = norm;
  if (end <= base) return undefined; // nothing finished
  const capacity = capacityBits(budget) - CRC_BITS;
  if (capacity <= 0) return undefined;

  tallyRuns(LIMIT);
  tallyU.choose(bestU);
  tallyF.choose(bestF);
  let cu = bestU.code, cf = bestF.code;
  const runsBits = HEADER_BITS + bestU.size + bestF.size;
  const bitmapBits = end - base;

  let format: number;
  let cut = end;
  if (runsBits <= capacity || bitmapBits <= capacity) {
    format = runsBits < bitmapBits ? FORMAT_RUNS : FORMAT_BITMAP;
  } else {
    // over budget: the longest prefix, whichever format keeps more
    let runsEnd = runsCut(cu, cf, capacity);
    // codes chosen for the whole set may not suit the prefix: choose again for it (at least the
    // first finished run), keep the better
    const { runs, count } = norm;
    const firstFinished = count > 0 && runs[0] === base ? base + runs[1] : base;
    tallyRuns(runsEnd > base ? runsEnd : firstFinished + 1);
    tallyU.choose(bestU);
    tallyF.choose(bestF);
    const again = runsCut(bestU.code, bestF.code, capacity);
    if (again > runsEnd) {
      runsEnd = again;
      cu = bestU.code;
      cf = bestF.code;
    }
    const bitmapEnd = bitmapCut(capacity);
    if (runsEnd <= base && bitmapEnd <= base) return undefined;
    if (runsEnd >= bitmapEnd) {
      format = FORMAT_RUNS;
      cut = runsEnd;
    } else {
      format = FORMAT_BITMAP;
      cut = bitmapEnd;
    }
  }

  const totalChars = Math.min(budget, charsFor(Math.min(capacity, format === FORMAT_RUNS ? runsBits : bitmapBits) + CRC_BITS));
  W.reset(((capacityBits(totalChars) + 7) >>> 3) + 8);
  if (format === FORMAT_RUNS) writeRuns(cu, cf, cut);
  else writeBitmap(cut);
  const payloadBits = W.pos;
  const metadata = finish(format, topic, partition, base, payloadBits);
  return {
    metadata,
    end: cut,
    finished: finishedBelow(cut),
    format: format === FORMAT_RUNS ? `runs:${codeName(cu)}/${codeName(cf)}` : "bitmap",
  };
}

// ---- decode ----------------------------------------------------------------------------------

/** A bounded bit reader over the decoded payload. */
class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly limit: number) {}
  bit(): number {
    const p = this.pos++;
    return (this.buf[p >>> 3] >>> (7 - (p & 7))) & 1;
  }
  /** n ≤ 60 bits; the caller checks that they are there. */
  bits(n: number): number {
    let v = 0;
    while (n > 24) {
      v = v * 16777216 + readAt(this.buf, this.pos, 24);
      this.pos += 24;
      n -= 24;
    }
    v = v * POW2[n] + readAt(this.buf, this.pos, n);
    this.pos += n;
    return v;
  }
}

const PADDING = -1; // the stream ended inside zeros: padding, no code
const BROKEN = -2; // the stream ended after a code's 1 bit, or a value out of range

/** Reads one value of code `code`; PADDING when the stream ends inside zeros, BROKEN when it ends inside a code. */
function readCode(r: Reader, code: number): number {
  let zeros = 0;
  for (;;) {
    if (r.pos >= r.limit) return PADDING; // only zeros since this code began: padding, never a claim
    if (r.bit() === 1) break;
    zeros++;
  }
  if (code < CODES) {
    const rest = zeros + code;
    if (rest > 56) return BROKEN; // ≥ 2^56: beyond any span
    if (r.limit - r.pos < rest) return BROKEN;
    return POW2[rest] + r.bits(rest) - POW2[code];
  }
  const k = code - CODES;
  if (r.limit - r.pos < k) return BROKEN;
  return zeros * POW2[k] + (k > 0 ? r.bits(k) : 0);
}

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

/** A decoded claim: which offsets of [base, end) are finished. Immutable. */
export class CompletedSet {
  /** The committed offset the claim is bound to. */
  readonly base: number;
  /** One past the last offset it claims anything about. */
  readonly end: number;
  readonly #runs: Float64Array;
  readonly #count: number;
  readonly #finished: number;
  #cursor = 0; // index of the first run that ends after the last query

  /** @internal use {@link decodeCompletedSet}; runs must be sorted, disjoint, inside [base, end). */
  constructor(base: number, end: number, runs: Float64Array, count: number) {
    this.base = base;
    this.end = end;
    this.#runs = runs;
    this.#count = count;
    let unfinished = 0;
    for (let i = 0; i < count; i++) unfinished += runs[2 * i + 1];
    this.#finished = end - base - unfinished;
  }

  /** Whether the claim says `offset` is finished. O(1) amortised for increasing queries, O(log runs) otherwise. */
  isFinished(offset: number): boolean {
    if (!(offset >= this.base && offset < this.end)) return false; // NaN, below base, ≥ end: unknown
    const runs = this.#runs;
    let i = this.#cursor;
    if (i > 0 && runs[2 * i - 2] + runs[2 * i - 1] > offset) i = this.#search(offset); // went back
    else {
      let steps = 0;
      while (i < this.#count && runs[2 * i] + runs[2 * i + 1] <= offset) {
        i++;
        if (++steps === 8) {
          i = this.#search(offset);
          break;
        }
      }
    }
    this.#cursor = i;
    return !(i < this.#count && runs[2 * i] <= offset);
  }

  /** The index of the first run that ends after `offset`. */
  #search(offset: number): number {
    const runs = this.#runs;
    let lo = 0, hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runs[2 * mid] + runs[2 * mid + 1] <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many offsets of [base, end) it claims finished (gaps included). */
  finishedCount(): number {
    return this.#finished;
  }

  /** Number of unfinished runs inside [base, end). */
  get runCount(): number {
    return this.#count;
  }

  /**
   * Copies the unfinished runs inside [from, end) as (start, length) pairs into `out` (a run that
   * contains `from` is clipped to start there), at most `max` pairs; returns how many. With
   * `base: from, end: set.end` they are a {@link RunsInput} for re-encoding at a later commit.
   */
  unfinishedRuns(from: number, out: Float64Array, max: number): number {
    const runs = this.#runs;
    const limit = Math.min(max, out.length >> 1);
    let i = from <= this.base ? 0 : this.#search(from);
    let n = 0;
    for (; i < this.#count && n < limit; i++) {
      const s = runs[2 * i], e = s + runs[2 * i + 1];
      const cs = s < from ? from : s;
      if (e <= cs) continue;
      out[2 * n] = cs;
      out[2 * n + 1] = e - cs;
      n++;
    }
    return n;
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
  if (format !== FORMAT_RUNS && format !== FORMAT_BITMAP) return { ok: false, reason: `unknown format '${metadata[0]}'` };
  const total = capacityBits(n);
  if (total < CRC_BITS + 1) return { ok: false, reason: `truncated: ${n} characters cannot hold a checksum and a claim` };
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
  const payloadBits = total - CRC_BITS;
  const stored = readAt(buf, payloadBits, 16) * 65536 + readAt(buf, payloadBits + 16, 16);
  if (checksum(format, n, topic, partition, base, buf, payloadBits) !== stored) {
    return { ok: false, reason: "checksum mismatch: corrupted, truncated, or committed for another topic, partition or offset" };
  }
  const runs = new RunList();
  let end: number;
  if (format === FORMAT_BITMAP) {
    end = decodeBitmap(buf, payloadBits, base, runs);
    if (end <= base) return { ok: false, reason: "claims nothing: the bitmap has no finished offset" };
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

/** Unfinished runs of a bitmap of `bits` bits into `runs`; returns end (one past the last 1 bit), or base if none. */
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
  return base + lastOne + 1;
}

/**
 * The union of two claims about one partition: an offset is finished when either says
 * so. Its range is [min base, max end); outside a claim's own range that claim says
 * nothing (unfinished). Used to add what this consumer itself finished in an earlier
 * assignment of the partition (that ended before its commit was acknowledged) to what
 * the committed metadata claims.
 */
export function unionOfClaims(a: CompletedSet, b: CompletedSet): CompletedSet {
  const base = Math.min(a.base, b.base), end = Math.max(a.end, b.end);
  // Each side's unfinished intervals over [base, end): its runs, plus what lies outside its range.
  const side = (s: CompletedSet): Float64Array => {
    const runs = new Float64Array(2 * s.runCount + 4);
    let n = 0;
    if (s.base > base) (runs[0] = base), (runs[1] = s.base - base), (n = 1);
    n += s.unfinishedRuns(s.base, runs.subarray(2 * n), s.runCount);
    if (s.end < end) {
      if (n > 0 && runs[2 * n - 2] + runs[2 * n - 1] === s.end) runs[2 * n - 1] += end - s.end;
      else (runs[2 * n] = s.end), (runs[2 * n + 1] = end - s.end), n++;
    }
    return runs.subarray(0, 2 * n);
  };
  const x = side(a), y = side(b);
  const out = new Float64Array(Math.max(2, x.length + y.length));
  let i = 0, j = 0, n = 0;
  while (i < x.length && j < y.length) {
    const s = Math.max(x[i], y[j]);
    const ex = x[i] + x[i + 1], ey = y[j] + y[j + 1];
    const e = Math.min(ex, ey);
    if (s < e) {
      if (n > 0 && out[2 * n - 2] + out[2 * n - 1] === s) out[2 * n - 1] += e - s;
      else (out[2 * n] = s), (out[2 * n + 1] = e - s), n++;
    }
    if (ex <= ey) i += 2;
    else j += 2;
  }
  // A trailing unfinished run says nothing a shorter end would not: end there.
  let last = end;
  if (n > 0 && out[2 * n - 2] + out[2 * n - 1] === end) last = out[2 * (--n)];
  return new CompletedSet(base, Math.max(base, last), out.subarray(0, 2 * n), n);
}
