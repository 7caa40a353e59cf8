/**
 * Completion: by handle (one call, or two handles per SIMD step), by offset, and the
 * advance of the head past the completed prefix.
 */

import { ADVANCED, BASE, BITS, BLOCKED, COMPLETED, DUPLICATE, FIRST, HEAD, ISSUED, LEN, LO, MASK, ONES, REJECTED, RUN_HEAD, RUN_MASK, RUN_TAIL, RUNS, ringWords, runOff, runSeq } from "./layout";
import { safeOf } from "./positions";
import { findRun, skipRetiredRuns } from "./runs";

/** Sets the summary bit of bitmap word `w` (it just became all ones). */
function markFull(t: usize, w: u32): void {
  const at = load<usize>(t, BITS) + (<usize>ringWords(load<u32>(t, MASK)) << 3) + (<usize>(w >> 6) << 3);
  store<u64>(at, load<u64>(at) | (<u64>1 << (w & 63)));
}

/** Completes the retained record `u` places after the head (u < LEN). */
// @ts-ignore: decorator
@inline function completeAt(t: usize, u: u32): i32 {
  const p = (load<u32>(t, HEAD) + u) & load<u32>(t, MASK); // the low word of HEAD
  const at = load<usize>(t, BITS) + (<usize>(p >> 6) << 3);
  const bit = <u64>1 << (p & 63);
  const x = load<u64>(at);
  if ((x & bit) != 0) return DUPLICATE;
  const y = x | bit;
  store<u64>(at, y);
  store<u32>(t, load<u32>(t, BLOCKED) + 1, BLOCKED);
  if (y == ONES) markFull(t, p >> 6);
  if (u != 0) return COMPLETED;
  advance(t);
  return ADVANCED;
}

// @ts-ignore: decorator
@inline const TWO52: f64 = 4503599627370496.0; // 2^52: d + 2^52 holds integer d < 2^52 in the low mantissa bits

/**
 * Completes one record by handle (one call, no allocation). The handle's distance from
 * the head, `d = handle - (base + head)`, is exact for every handle that can be
 * accepted, so `d` an integer in [0, retained) ⟺ `seq = handle - base` an integer in
 * [head, issued), the JS engine's test. Integrality without a float-to-int conversion:
 * for 0 ≤ d < 2^52, `(d + 2^52) - 2^52 == d` exactly when d is an integer (NaN fails
 * `d >= 0`), and the low word of `d + 2^52` is then d itself.
 */
export function complete(t: usize, handle: f64): i32 {
  const d = handle - load<f64>(t, LO);
  const y = d + TWO52;
  if (!(d >= 0 && d < <f64>load<u32>(t, LEN) && y - TWO52 == d)) return completeOutside(t, handle);
  return completeAt(t, <u32>reinterpret<u64>(y));
}

/** A handle outside [head, issued) or not an integer: `Duplicate` below the head, else `Rejected`. */
function completeOutside(t: usize, handle: f64): i32 {
  const seqf = handle - load<f64>(t, BASE);
  return seqf >= 0 && seqf < <f64>load<i64>(t, HEAD) && trunc<f64>(seqf) == seqf ? DUPLICATE : REJECTED;
}

/** Sets the bit of ring position `p`; 1 if it was clear (newly completed), else 0. */
// @ts-ignore: decorator
@inline function setBit(t: usize, bits: usize, p: u32): u32 {
  const at = bits + (<usize>(p >> 6) << 3);
  const bit = <u64>1 << (p & 63);
  const x = load<u64>(at);
  if ((x & bit) != 0) return 0;
  const z = x | bit;
  store<u64>(at, z);
  if (z == ONES) markFull(t, p >> 6);
  return 1;
}

/**
 * Completes the handles (f64 at `src`); returns how many were newly completed. Two
 * handles per step: the test of complete() runs on both lanes of an f64x2 (SIMD), then
 * the bits are set one after the other (two handles may share a word).
 */
export function completeMany(t: usize, src: usize, count: u32): u32 {
  const lo = f64x2.splat(load<f64>(t, LO));
  const len = f64x2.splat(<f64>load<u32>(t, LEN));
  const two52 = f64x2.splat(TWO52);
  const zero = f64x2.splat(0);
  const head = load<u32>(t, HEAD); // the low word
  const mask = load<u32>(t, MASK);
  const headv = i32x4.splat(head);
  const maskv = i32x4.splat(mask);
  const bits = load<usize>(t, BITS);
  let added: u32 = 0;
  let i: u32 = 0;
  for (; i + 2 <= count; i += 2) {
    const d = f64x2.sub(v128.load(src + (<usize>i << 3)), lo);
    const y = f64x2.add(d, two52);
    const ok = v128.and(v128.and(f64x2.eq(f64x2.sub(y, two52), d), f64x2.ge(d, zero)), f64x2.lt(d, len));
    const p = v128.and(i32x4.add(y, headv), maskv); // i32 lanes 0 and 2: the low words, head + d
    const valid = i64x2.bitmask(ok);
    if (valid & 1) added += setBit(t, bits, i32x4.extract_lane(p, 0));
    if (valid & 2) added += setBit(t, bits, i32x4.extract_lane(p, 2));
  }
  if (i < count) {
    const d = load<f64>(src + (<usize>i << 3)) - load<f64>(t, LO);
    const y = d + TWO52;
    if (d >= 0 && d < <f64>load<u32>(t, LEN) && y - TWO52 == d) {
      added += setBit(t, bits, (head + <u32>reinterpret<u64>(y)) & mask);
    }
  }
  store<u32>(t, load<u32>(t, BLOCKED) + added, BLOCKED);
  // The head's bit was clear (it is the oldest unfinished record): set now means it completed.
  const hp = head & mask;
  if (load<u32>(t, LEN) != 0 && ((load<u64>(bits + (<usize>(hp >> 6) << 3)) >> (hp & 63)) & 1) != 0) advance(t);
  return added;
}

/** Completes the delivered record at `offset` (an integer below 2^53). */
export function completeOffset(t: usize, offset: f64): i32 {
  const o = <i64>offset;
  const head = load<i64>(t, HEAD);
  const issued = load<i64>(t, ISSUED);
  if (o < safeOf(t, head, issued)) {
    const first = load<i64>(t, FIRST);
    return first >= 0 && o >= first ? DUPLICATE : REJECTED;
  }
  if (head >= issued) return REJECTED;
  const runs = load<usize>(t, RUNS);
  const rm = load<u32>(t, RUN_MASK);
  const tail = load<i64>(t, RUN_TAIL);
  // Newest run first (dense offsets: one run), else a search over the runs held.
  let r = tail - 1;
  let end = issued;
  if (o < runOff(runs, rm, r)) {
    r = findRun(runs, rm, load<i64>(t, RUN_HEAD), tail - 2, o);
    end = runSeq(runs, rm, r + 1);
  }
  const seq = runSeq(runs, rm, r) + (o - runOff(runs, rm, r));
  return seq < end ? completeAt(t, <u32>(seq - head)) : REJECTED;
}

/** Moves head past the completed prefix: ctz in the head's word, then whole words via the summary. */
function advance(t: usize): void {
  const head = load<i64>(t, HEAD);
  const end = load<i64>(t, ISSUED);
  const mask = load<u32>(t, MASK);
  const bits = load<usize>(t, BITS);
  const summary = bits + (<usize>ringWords(mask) << 3);
  let pos = head;
  while (pos < end) {
    const p = <u32>pos & mask;
    const off = p & 63;
    const zeros = ~load<u64>(bits + (<usize>(p >> 6) << 3)) & (ONES << off);
    if (zeros != 0) {
      pos += <i64>ctz<u64>(zeros) - off;
      break;
    }
    pos += 64 - off;
    // At a word boundary: skip every word the summary marks as all ones. A ring of
    // fewer than 4,096 bits leaves the summary's high bits 0 ("not full"), so a skip
    // ends at the ring's end at the latest and the scan wraps to position 0.
    while (pos < end) {
      const w = (<u32>pos & mask) >> 6;
      const sb = w & 63;
      const notFull = ~load<u64>(summary + (<usize>(w >> 6) << 3)) & (ONES << sb);
      if (notFull == 0) {
        pos += <i64>(64 - sb) << 6;
        continue;
      }
      pos += (<i64>ctz<u64>(notFull) - sb) << 6;
      break;
    }
  }
  if (pos > end) pos = end;
  store<u32>(t, load<u32>(t, BLOCKED) - <u32>(pos - head), BLOCKED);
  store<i64>(t, pos, HEAD);
  store<f64>(t, load<f64>(t, BASE) + <f64>pos, LO);
  store<u32>(t, <u32>(end - pos), LEN);
  skipRetiredRuns(t, pos);
}
