/**
 * The completed-set format written from its documentation (core/tracker/completed_set/mod.ts),
 * independent of the module: the tests build strings with it (including ones the encoder never
 * writes) and compare the encoder's output with it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

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

/** The first 32 bits of SHA-256, from the runtime's own implementation (not the module's). */
export const sha256First32 = (bytes: number[]): number => createHash("sha256").update(Uint8Array.from(bytes)).digest().readUInt32BE(0);

/** The string for `payload` (0/1 characters) in format number `format`, checked with `check`. */
function build(format: number, check: (bytes: number[]) => number, payload: string, topic: string, partition: number, b: number): string {
  let n = 1;
  while (T(n) < payload.length + 32) n++;
  const padded = payload.padEnd(T(n) - 32, "0");
  const s = characters(format, padded + bin(check(boundBytes(format, n, topic, partition, b, padded)), 32));
  assert.equal(s.length, n);
  return s;
}

/**
 * The metadata for `payload` (a string of 0/1) as the module doc describes it: version 2,
 * format number 2 + kind (kind 0: runs, 1: bitmap), the first 32 bits of SHA-256 as the check.
 */
export function specString(kind: number, payload: string, topic: string, partition: number, b: number): string {
  return build(2 + kind, sha256First32, payload, topic, partition, b);
}

/** The same claim in format version 1 (format number = kind, CRC-32 as the check), as version 1 wrote it. */
export function v1String(kind: number, payload: string, topic: string, partition: number, b: number): string {
  return build(kind, crc32, payload, topic, partition, b);
}
