/**
 * The completed-set codec's variable-length codes (see completed_set.ts): Exp-Golomb of order
 * c < 32 and Golomb-Rice of order c − 32; how to write them (into a zeroed buffer), their
 * sizes, and how to read them back from an untrusted, bounded stream.
 *
 * @module
 */
import { readAt } from "./wire.ts";

/** @internal Orders 0..31 for each family: codes below are Exp-Golomb, from it Rice. */
export const CODES = 32;

// ---- bits ------------------------------------------------------------------------------------

/** @internal 2^i for i < 64. */
export const POW2: Float64Array = (() => {
  const p = new Float64Array(64);
  for (let i = 0; i < 64; i++) p[i] = 2 ** i;
  return p;
})();

/** @internal Number of bits of x, an integer in [0, 2^55). */
export function bitLength(x: number): number {
  return x < 4294967296 ? 32 - Math.clz32(x) : 64 - Math.clz32(Math.floor(x / 4294967296));
}

/** @internal A bit writer over a zeroed scratch buffer (most significant bit first). */
export class BitWriter {
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

/** @internal Bits of code `code` for value v. */
export function codeLength(v: number, code: number): number {
  if (code < CODES) return 2 * bitLength(v + POW2[code]) - code - 1;
  const k = code - CODES;
  return Math.floor(v / POW2[k]) + 1 + k;
}

/** @internal The largest v whose code takes at most r bits (−1 if none). */
export function largestFitting(r: number, code: number): number {
  if (code < CODES) {
    const m = Math.floor((r + code + 1) / 2);
    return m < code + 1 ? -1 : POW2[Math.min(m, 62)] - POW2[code] - 1;
  }
  const k = code - CODES;
  return r < k + 1 ? -1 : (r - k) * POW2[k] - 1;
}

/** @internal A code's name in `Encoded.format`: `eg<k>` or `rice<k>`. */
export function codeName(code: number): string {
  return code < CODES ? `eg${code}` : `rice${code - CODES}`;
}

// ---- reading ---------------------------------------------------------------------------------

/** @internal A bounded bit reader over the decoded payload. */
export class Reader {
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

/** @internal {@link readCode}: the stream ended inside zeros: padding, no code. */
export const PADDING = -1;
/** @internal {@link readCode}: the stream ended after a code's 1 bit, or a value out of range. */
export const BROKEN = -2;

/** @internal Reads one value of code `code`; PADDING when the stream ends inside zeros, BROKEN when it ends inside a code. */
export function readCode(r: Reader, code: number): number {
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
