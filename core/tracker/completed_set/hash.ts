/**
 * The completed-set codec's check (see completed_set.ts): SHA-256 (FIPS 180-4) in plain
 * TypeScript, of which the format keeps the first 32 bits. A real hash, because the check must
 * have no structure of its own: CRC-32, the check of format version 1, is linear over GF(2), so
 * for committed offsets ≥ 2^32 whole families of offset pairs X ≠ Y got the same check for the
 * same payload (their XOR in a 21-dimensional space), and a string written at X verified at Y.
 * Truncating SHA-256 keeps no such family: every difference in the bound fields changes the
 * 32 bits as a random function would.
 *
 * Runtime-agnostic (no `crypto.subtle`, which is asynchronous, nor `node:crypto`); one scratch
 * buffer, no allocation per call once it has grown.
 *
 * @module
 */

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H0 = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Int32Array(64);
const H = new Int32Array(8);

let scratch = new Uint8Array(1024);

/**
 * @internal A scratch buffer for a message of `bytes` bytes (with room for SHA-256's padding):
 * fill its first `bytes` bytes, then call {@link sha256First32}. Valid until the next call.
 */
export function hashScratch(bytes: number): Uint8Array {
  const need = (bytes + 72) & ~63;
  if (scratch.length < need) scratch = new Uint8Array(Math.max(need, 2 * scratch.length));
  return scratch;
}

/**
 * @internal The first 32 bits (big-endian, as an unsigned integer) of SHA-256 of
 * `buf[0..length)`. Pads in place: `buf` needs room for the padding (see {@link hashScratch}).
 */
export function sha256First32(buf: Uint8Array, length: number): number {
  const total = (length + 72) & ~63; // length + 0x80 + 8 length bytes, rounded up to 64
  buf[length] = 0x80;
  buf.fill(0, length + 1, total - 8);
  const hi = Math.floor(length / 536870912); // the bit length's upper 32 bits
  const lo = (length * 8) >>> 0;
  buf[total - 8] = hi >>> 24;
  buf[total - 7] = (hi >>> 16) & 0xff;
  buf[total - 6] = (hi >>> 8) & 0xff;
  buf[total - 5] = hi & 0xff;
  buf[total - 4] = lo >>> 24;
  buf[total - 3] = (lo >>> 16) & 0xff;
  buf[total - 2] = (lo >>> 8) & 0xff;
  buf[total - 1] = lo & 0xff;
  H.set(H0);
  for (let at = 0; at < total; at += 64) compress(buf, at);
  return H[0] >>> 0;
}

function compress(buf: Uint8Array, at: number): void {
  const w = W;
  for (let i = 0; i < 16; i++) {
    const j = at + 4 * i;
    w[i] = (buf[j] << 24) | (buf[j + 1] << 16) | (buf[j + 2] << 8) | buf[j + 3];
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15], y = w[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0] + a) | 0;
  H[1] = (H[1] + b) | 0;
  H[2] = (H[2] + c) | 0;
  H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0;
  H[5] = (H[5] + f) | 0;
  H[6] = (H[6] + g) | 0;
  H[7] = (H[7] + h) | 0;
}
