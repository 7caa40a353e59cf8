/**
 * The completed-set codec's wire format (version 1, see completed_set.ts): its constants, the
 * 91-character alphabet and the characters-to-bits arithmetic, and the CRC-32 that binds a
 * string to its topic, partition and committed offset. Shared by the encoder and the decoder.
 *
 * @module
 */

/** Default budget: the broker's default `offset.metadata.max.bytes`. */
export const DEFAULT_BUDGET = 4096;
/** Longest metadata string encoded or decoded (a budget above it is rejected, a longer string ignored). */
export const MAX_METADATA_LENGTH = 65536;

/** @internal 2^53: offsets and spans stay below it. */
export const LIMIT = 9007199254740992;
/** @internal Format number of the runs payload. */
export const FORMAT_RUNS = 0;
/** @internal Format number of the bitmap payload. */
export const FORMAT_BITMAP = 1;
/** @internal Bits of the trailing checksum. */
export const CRC_BITS = 32;
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

/** @internal CRC-32 of the binding header and the first `payloadBits` bits of `buf`. */
export function checksum(format: number, n: number, topic: string, partition: number, base: number, buf: Uint8Array, payloadBits: number): number {
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
