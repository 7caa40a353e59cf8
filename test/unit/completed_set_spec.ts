/**
 * The completed-set format written from its documentation (core/tracker/completed_set.ts),
 * independent of the module: the tests build strings with it (including ones the encoder never
 * writes) and compare the encoder's output with it.
 */
import assert from "node:assert/strict";

/** The 91-character alphabet: `!`…`~` without `"`, `'` and `\`. */
export const ALPHA = Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => !`"'\\`.includes(c)).join("");

/** Bits carried by a string of n ≥ 1 characters. */
export const T = (n: number): number => 4 + 13 * Math.floor((n - 1) / 2) + 6 * ((n - 1) % 2);

/** v in `width` binary digits. */
export const bin = (v: number, width: number): string => v.toString(2).padStart(width, "0");

/** CRC-32 (IEEE), bit by bit. */
export function crc32(bytes: number[]): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ 0xffffffff) >>> 0;
}

const u32 = (v: number): number[] => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];

/** The bytes the check covers: format, n, partition, base, topic length and bytes, then the padded payload. */
export function boundBytes(format: number, n: number, topic: string, partition: number, b: number, padded: string): number[] {
  const topicBytes = [...new TextEncoder().encode(topic)];
  const packed: number[] = [];
  for (let i = 0; i < padded.length; i += 8) packed.push(parseInt(padded.slice(i, i + 8).padEnd(8, "0"), 2));
  return [format, ...u32(n), ...u32(partition), ...u32(Math.floor(b / 2 ** 32)), ...u32(b % 2 ** 32), topicBytes.length >> 8, topicBytes.length & 255, ...topicBytes, ...packed];
}

/** The characters for a bit string whose first 4 bits go with format `format` into the first character. */
export function characters(format: number, bits: string): string {
  let s = ALPHA[16 * format + parseInt(bits.slice(0, 4), 2)];
  for (let i = 4; i < bits.length;) {
    if (bits.length - i >= 13) {
      const v = parseInt(bits.slice(i, i + 13), 2);
      s += ALPHA[Math.floor(v / 91)] + ALPHA[v % 91];
      i += 13;
    } else {
      s += ALPHA[parseInt(bits.slice(i), 2)];
      i = bits.length;
    }
  }
  return s;
}

/** The metadata for `payload` (a string of 0/1) as the module doc describes it. */
export function specString(format: number, payload: string, topic: string, partition: number, b: number): string {
  let n = 1;
  while (T(n) < payload.length + 32) n++;
  const padded = payload.padEnd(T(n) - 32, "0");
  const crc = crc32(boundBytes(format, n, topic, partition, b, padded));
  const s = characters(format, padded + bin(crc, 32));
  assert.equal(s.length, n);
  return s;
}
