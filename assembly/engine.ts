/**
 * The WASM engine: the AssemblyScript hot path behind the same engine interface as
 * core/tracker/js_engine.ts, answering every call exactly as it does (core/tracker/wasm_engine.ts is
 * the binding; test/unit/wasm_differential.test.ts proves the agreement).
 *
 * One module instance serves every tracker. A tracker is a small struct in linear
 * memory (see the field offsets below) pointing at two blocks, all from the allocator in
 * assembly/alloc.ts (freed blocks are reused; the memory starts at 1 MiB and grows by
 * exactly the pages a block lacks; the AS runtime is the `stub` one, and nothing calls
 * its heap):
 * - the ring: `bits` (one completed bit per retained record at ring position
 *   `seq & mask`, 64-bit words) followed by `summary` (one bit per bitmap word; set ⟹
 *   that word is all ones, so the prefix advance skips 64 records per word and up to
 *   4,096 per summary word). Bits of seqs in [head, issued) are exact; others are
 *   stale and cleared when their position is issued again. Starts at 512 bits and
 *   doubles only when the retained entries need it, in place when the block can be
 *   extended (a large ring at the top of the memory or before free memory), else into a
 *   new block.
 * - the runs: (first seq, first offset) pairs, a ring of runs; a new run starts only at
 *   a gap in the offsets, so dense offsets cost nothing per record.
 *
 * Offsets and handles cross the boundary as f64 (integers below 2^53); inside they are
 * i64. Nothing here allocates managed objects.
 */

import { alloc, free, grow, held, used } from "./alloc";

// Tracker struct: field offsets in bytes. The first 24 bytes are all that the hot
// path (complete, completeMany) reads: LO and LEN are kept in step with HEAD/ISSUED.
// @ts-ignore: decorator
@inline const LO: usize = 0; // f64: handle of the head record (base + head)
// @ts-ignore: decorator
@inline const LEN: usize = 8; // u32: retained entries (issued - head), at most 2^30
// @ts-ignore: decorator
@inline const MASK: usize = 12; // u32: ring size in bits - 1
// @ts-ignore: decorator
@inline const BITS: usize = 16; // usize: the ring block (bitmap words, then summary words)
// @ts-ignore: decorator
@inline const BLOCKED: usize = 20; // u32: completed records in [head, issued)
// @ts-ignore: decorator
@inline const HEAD: usize = 24; // i64: seq of the oldest retained record
// @ts-ignore: decorator
@inline const ISSUED: usize = 32; // i64: seq the next registered record gets
// @ts-ignore: decorator
@inline const BASE: usize = 40; // f64: first handle (handles are base + seq)
// @ts-ignore: decorator
@inline const NEXT: usize = 48; // i64: the last batch's next position (or the start; -1 unknown)
// @ts-ignore: decorator
@inline const FIRST: usize = 56; // i64: first offset ever registered (-1 none)
// @ts-ignore: decorator
@inline const LAST: usize = 64; // i64: last offset registered (-1 none)
// @ts-ignore: decorator
@inline const RUN_HEAD: usize = 72; // i64: absolute index of the last run starting at or before head
// @ts-ignore: decorator
@inline const RUN_TAIL: usize = 80; // i64: number of runs ever opened
// @ts-ignore: decorator
@inline const RUNS: usize = 88; // usize: the runs block, 16 bytes per run (seq i64, offset i64)
// @ts-ignore: decorator
@inline const RUN_MASK: usize = 92; // u32: runs held - 1
// @ts-ignore: decorator
@inline const STRUCT_SIZE: usize = 96;

// @ts-ignore: decorator
@inline const MIN_RING: u32 = 512; // bits: 64 bytes of bitmap + one summary word
// @ts-ignore: decorator
@inline const MIN_RUNS: u32 = 4;

// Completion codes (core/tracker/engine.ts).
// @ts-ignore: decorator
@inline const REJECTED: i32 = 0;
// @ts-ignore: decorator
@inline const DUPLICATE: i32 = 1;
// @ts-ignore: decorator
@inline const COMPLETED: i32 = 2;
// @ts-ignore: decorator
@inline const ADVANCED: i32 = 3;

// @ts-ignore: decorator
@inline const ONES: u64 = 0xffff_ffff_ffff_ffff;

/** Words of the bitmap of a ring of `mask + 1` bits. */
// @ts-ignore: decorator
@inline function ringWords(mask: u32): u32 {
  return (mask + 1) >> 6;
}

/** Words of the summary of a ring of `mask + 1` bits (at least one). */
// @ts-ignore: decorator
@inline function summaryWords(mask: u32): u32 {
  const w = ringWords(mask) >> 6;
  return w > 0 ? w : 1;
}

/** Bytes of the ring block. */
// @ts-ignore: decorator
@inline function ringBytes(mask: u32): usize {
  return <usize>(ringWords(mask) + summaryWords(mask)) << 3;
}

/** Bytes of the runs block of `rm + 1` runs. */
// @ts-ignore: decorator
@inline function runBytes(rm: u32): usize {
  return (<usize>rm + 1) << 4;
}

// @ts-ignore: decorator
@inline function runSeq(runs: usize, rm: u32, i: i64): i64 {
  return load<i64>(runs + (<usize>(<u32>i & rm) << 4));
}

// @ts-ignore: decorator
@inline function runOff(runs: usize, rm: u32, i: i64): i64 {
  return load<i64>(runs + (<usize>(<u32>i & rm) << 4), 8);
}

// ---------------------------------------------------------------- lifecycle

/** Opens a tracker: `base` first handle, `start` safe position before anything is registered (-1 unknown). */
export function open(base: f64, start: f64): usize {
  const t = alloc(STRUCT_SIZE);
  store<f64>(t, base, BASE);
  store<f64>(t, base, LO);
  store<u32>(t, 0, LEN);
  store<i64>(t, 0, HEAD);
  store<i64>(t, 0, ISSUED);
  store<u32>(t, 0, BLOCKED);
  store<i64>(t, <i64>start, NEXT);
  store<i64>(t, -1, FIRST);
  store<i64>(t, -1, LAST);
  store<i64>(t, 0, RUN_HEAD);
  store<i64>(t, 0, RUN_TAIL);
  const mask = MIN_RING - 1;
  const bytes = ringBytes(mask);
  const bits = alloc(bytes);
  memory.fill(bits, 0, bytes);
  store<usize>(t, bits, BITS);
  store<u32>(t, mask, MASK);
  store<usize>(t, alloc(<usize>MIN_RUNS << 4), RUNS);
  store<u32>(t, MIN_RUNS - 1, RUN_MASK);
  return t;
}

/** Frees the tracker's storage; `t` is never used again. */
export function release(t: usize): void {
  free(load<usize>(t, BITS), ringBytes(load<u32>(t, MASK)));
  free(load<usize>(t, RUNS), runBytes(load<u32>(t, RUN_MASK)));
  free(t, STRUCT_SIZE);
}

/** Bytes of linear memory the tracker holds (struct, ring, runs, as the allocator rounds them). */
export function bytes(t: usize): f64 {
  return <f64>(held(STRUCT_SIZE) + held(ringBytes(load<u32>(t, MASK))) + held(runBytes(load<u32>(t, RUN_MASK))));
}

let scratchPtr: usize = 0;
let scratchLen: u32 = 0;

/** Bytes of linear memory the allocator has used: the end of the highest block ever handed out. */
export function memoryUsed(): f64 {
  return <f64>used();
}

/** A scratch area of at least `n` f64 slots for batches (the binding copies a batch there, then makes one call). */
export function scratch(n: u32): usize {
  if (n > scratchLen) {
    if (scratchPtr != 0) free(scratchPtr, <usize>scratchLen << 3);
    scratchPtr = alloc(<usize>n << 3);
    scratchLen = n;
  }
  return scratchPtr;
}

// ---------------------------------------------------------------- registration

/** Appends `count` offsets (f64 at `src`), validated by the façade; returns the first record's handle. */
export function register(t: usize, src: usize, count: u32, next: f64): f64 {
  const issued = load<i64>(t, ISSUED);
  const first = load<f64>(t, BASE) + <f64>issued;
  if (count > 0) {
    const head = load<i64>(t, HEAD);
    ensureRing(t, issued - head + count);
    clearSeqs(t, issued, count);
    let last = load<i64>(t, RUN_TAIL) == 0 ? -2 : load<i64>(t, LAST); // -2: the first record opens a run
    const o0 = <i64>load<f64>(src);
    const o1 = <i64>load<f64>(src + (<usize>(count - 1) << 3));
    if (o1 - o0 == <i64>count - 1) {
      // Strictly increasing integers (the façade checked) spanning count - 1: one dense run,
      // continuing the last one unless there is a gap before it.
      if (o0 != last + 1) openRun(t, issued, o0);
      last = o1;
    } else {
      for (let i: u32 = 0; i < count; i++) {
        const o = <i64>load<f64>(src + (<usize>i << 3));
        if (o != last + 1) openRun(t, issued + i, o);
        last = o;
      }
    }
    if (load<i64>(t, FIRST) < 0) store<i64>(t, o0, FIRST);
    store<i64>(t, last, LAST);
    store<i64>(t, issued + count, ISSUED);
    store<u32>(t, <u32>(issued + count - head), LEN);
    skipRetiredRuns(t, head); // head may sit exactly where a new run opened
  }
  store<i64>(t, <i64>next, NEXT);
  return first;
}

// @ts-ignore: decorator
@inline const LIMIT: f64 = 9007199254740992.0; // 2^53: offsets are integers below it

/**
 * Whether the `count` f64 offsets at `src` are plainly valid: integers in (0, 2^53),
 * strictly increasing, the first not below `floor`. A dense stretch (each one past the
 * previous, the common case) is checked two offsets per step.
 */
function plainBatch(src: usize, count: u32, floor: f64): bool {
  const first = load<f64>(src);
  if (!(first >= floor && first > 0 && first < LIMIT && trunc<f64>(first) == first)) return false;
  let i: u32 = 1;
  let expected = f64x2(first + 1, first + 2);
  const two = f64x2.splat(2);
  while (i + 2 <= count && i64x2.all_true(f64x2.eq(v128.load(src + (<usize>i << 3)), expected))) {
    expected = f64x2.add(expected, two);
    i += 2;
  }
  let prev = load<f64>(src + (<usize>(i - 1) << 3)); // the dense stretch's last: below 2^53 ⟹ all exact integers
  if (!(prev < LIMIT)) return false;
  for (; i < count; i++) {
    const o = load<f64>(src + (<usize>i << 3));
    if (!(o > prev && o < LIMIT && trunc<f64>(o) == o)) return false;
    prev = o;
  }
  return true;
}

/**
 * Registers `count` > 0 offsets (f64 at `src`) if they are plainly valid (see
 * plainBatch; the floor is the last batch's next position); returns the first record's
 * handle, or -1 with nothing changed. The caller has checked `next` and the capacity.
 */
export function registerPlain(t: usize, src: usize, count: u32, next: f64): f64 {
  if (!plainBatch(src, count, <f64>load<i64>(t, NEXT))) return -1;
  return register(t, src, count, next);
}

/**
 * Grows the ring (by doubling) to hold `needed` entries: extends its block in place if
 * the allocator can, else moves the bitmap to a new block; then re-lays the bits there.
 */
function ensureRing(t: usize, needed: i64): void {
  const mask = load<u32>(t, MASK);
  if (needed <= <i64>mask + 1) return;
  let size: i64 = <i64>mask + 1;
  while (size < needed) size <<= 1;
  const newMask = <u32>(size - 1);
  const oldBytes = ringBytes(mask);
  const newBytes = ringBytes(newMask);
  let bits = load<usize>(t, BITS);
  if (!grow(bits, oldBytes, newBytes)) {
    const nb = alloc(newBytes);
    memory.copy(nb, bits, <usize>ringWords(mask) << 3); // the bitmap; the summary is rebuilt
    free(bits, oldBytes);
    bits = nb;
  }
  relay(bits, mask, newMask, load<i64>(t, HEAD), load<i64>(t, ISSUED));
  store<usize>(t, bits, BITS);
  store<u32>(t, newMask, MASK);
}

/**
 * Turns the bitmap of a ring of `mask + 1` bits at the start of the block `bits` into the
 * ring block of `newMask + 1` bits, in place; whatever else the block holds is
 * overwritten. Retained seq s ∈ [head, end) (at most mask + 1 of them) moves from
 * position `s & mask` to `s & newMask`. Split at the multiples of the old size, the
 * range is at most two segments, each within the old bitmap and moving up by a multiple
 * of the old size (≥ 512 bits): whole words, to places that neither overlaps its own
 * source nor the other segment's source or destination. Every other bit is then cleared
 * and the summary rebuilt, so the block ends the same as a copy into zeroed memory would.
 */
function relay(bits: usize, mask: u32, newMask: u32, head: i64, end: i64): void {
  for (let s = head; s < end;) {
    const p = <u32>s & mask;
    let e = s + (<i64>mask + 1 - <i64>p); // the next multiple of the old size
    if (e > end) e = end;
    const q = <u32>s & newMask;
    if (q != p) {
      const w = p >> 6;
      const words = ((p + <u32>(e - s) - 1) >> 6) + 1 - w;
      memory.copy(bits + (<usize>(q >> 6) << 3), bits + (<usize>w << 3), <usize>words << 3);
    }
    s = e;
  }
  // Clear the positions outside [head, end): the circular range from end's position on.
  const n = newMask + 1;
  const len = n - <u32>(end - head);
  const a = <u32>end & newMask;
  const first = len < n - a ? len : n - a;
  clearBits(bits, a, a + first);
  if (first < len) clearBits(bits, 0, len - first);
  const words = ringWords(newMask);
  const summary = bits + (<usize>words << 3);
  memory.fill(summary, 0, <usize>summaryWords(newMask) << 3);
  for (let w: u32 = 0; w < words; w++) {
    if (load<u64>(bits + (<usize>w << 3)) == ONES) {
      const at = summary + (<usize>(w >> 6) << 3);
      store<u64>(at, load<u64>(at) | (<u64>1 << (w & 63)));
    }
  }
}

/** Clears the bits (and summary bits) of seqs [from, from + count), count ≤ ring size. */
function clearSeqs(t: usize, from: i64, count: u32): void {
  const mask = load<u32>(t, MASK);
  const bits = load<usize>(t, BITS);
  const summary = bits + (<usize>ringWords(mask) << 3);
  const p = <u32>from & mask;
  const room = mask + 1 - p;
  const first = count < room ? count : room;
  clearPositions(bits, summary, p, p + first);
  if (first < count) clearPositions(bits, summary, 0, count - first);
}

/** Clears ring positions [a, b) and the summary bits of the words they touch. */
// @ts-ignore: decorator
@inline function clearPositions(bits: usize, summary: usize, a: u32, b: u32): void {
  clearBits(bits, a, b);
  clearBits(summary, a >> 6, ((b - 1) >> 6) + 1);
}

/** Clears bits [a, b) of the u64 words at `ptr` (a < b). */
function clearBits(ptr: usize, a: u32, b: u32): void {
  const wa = a >> 6;
  const wb = (b - 1) >> 6;
  const headMask = ONES << (a & 63);
  const tailMask = ONES >> (63 - ((b - 1) & 63));
  const pa = ptr + (<usize>wa << 3);
  if (wa == wb) {
    store<u64>(pa, load<u64>(pa) & ~(headMask & tailMask));
  } else {
    store<u64>(pa, load<u64>(pa) & ~headMask);
    if (wb > wa + 1) memory.fill(pa + 8, 0, <usize>(wb - wa - 1) << 3);
    const pb = ptr + (<usize>wb << 3);
    store<u64>(pb, load<u64>(pb) & ~tailMask);
  }
}

function openRun(t: usize, seq: i64, offset: i64): void {
  const tail = load<i64>(t, RUN_TAIL);
  if (tail - load<i64>(t, RUN_HEAD) > <i64>load<u32>(t, RUN_MASK)) growRuns(t);
  const at = load<usize>(t, RUNS) + (<usize>(<u32>tail & load<u32>(t, RUN_MASK)) << 4);
  store<i64>(at, seq);
  store<i64>(at, offset, 8);
  store<i64>(t, tail + 1, RUN_TAIL);
}

function growRuns(t: usize): void {
  const rm = load<u32>(t, RUN_MASK);
  const size = (rm + 1) << 1;
  const nm = size - 1;
  const old = load<usize>(t, RUNS);
  const runs = alloc(runBytes(nm));
  const tail = load<i64>(t, RUN_TAIL);
  for (let i = load<i64>(t, RUN_HEAD); i < tail; i++) {
    const from = old + (<usize>(<u32>i & rm) << 4);
    const to = runs + (<usize>(<u32>i & nm) << 4);
    store<i64>(to, load<i64>(from));
    store<i64>(to, load<i64>(from, 8), 8);
  }
  free(old, runBytes(rm));
  store<usize>(t, runs, RUNS);
  store<u32>(t, nm, RUN_MASK);
}

/** Invariant: RUN_HEAD is the last run starting at or before head. */
function skipRetiredRuns(t: usize, head: i64): void {
  const runs = load<usize>(t, RUNS);
  const rm = load<u32>(t, RUN_MASK);
  const tail = load<i64>(t, RUN_TAIL);
  let rh = load<i64>(t, RUN_HEAD);
  while (rh + 1 < tail && runSeq(runs, rm, rh + 1) <= head) rh++;
  store<i64>(t, rh, RUN_HEAD);
}

// ---------------------------------------------------------------- completion

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

/**
 * The last run starting at or before offset `o` among runs [lo, hi] (absolute indices),
 * given runOff(lo) ≤ o. A few interpolation steps first (offsets grow about evenly over
 * runs in real topics, so they land next to the answer), then bisection. Every probe
 * lies in (lo, hi], so each step narrows the range.
 */
function findRun(runs: usize, rm: u32, lo: i64, hi: i64, o: i64): i64 {
  for (let k = 0; lo < hi; k++) {
    let probe: i64;
    if (k < 4) {
      const a = runOff(runs, rm, lo), b = runOff(runs, rm, hi);
      if (o >= b) return hi;
      probe = lo + 1 + <i64>(<f64>(o - a) / <f64>(b - a) * <f64>(hi - lo - 1)); // in [lo + 1, hi]
    } else {
      probe = lo + ((hi - lo + 1) >> 1);
    }
    if (runOff(runs, rm, probe) <= o) lo = probe;
    else hi = probe - 1;
  }
  return lo;
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

// ---------------------------------------------------------------- unfinished runs

// Where the last unfinishedRuns() call stopped: the seq after its last pair, and the
// pending records from there on. A next call continues there when the caller's output
// area was full.
let resumeSeq: i64 = 0;
let resumeLeft: i64 = 0;

/**
 * The first seq in [pos, end) whose record is pending (bit clear), else end: ctz in the
 * word, then whole words of completed records skipped via the summary (as in advance(),
 * which stays as it is for the per-call path).
 */
function nextPending(bits: usize, summary: usize, mask: u32, pos: i64, end: i64): i64 {
  while (pos < end) {
    const p = <u32>pos & mask;
    const off = p & 63;
    const zeros = ~load<u64>(bits + (<usize>(p >> 6) << 3)) & (ONES << off);
    if (zeros != 0) {
      pos += <i64>ctz<u64>(zeros) - off;
      return pos < end ? pos : end;
    }
    pos += 64 - off;
    // At a word boundary: skip every word the summary marks as all ones (a ring of fewer
    // than 4,096 bits leaves the summary's high bits 0, so a skip ends at the ring's end).
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
  return end;
}

/** The first seq in [pos, end) whose record is completed (bit set), else end: a word of pending records is one step. */
function nextCompleted(bits: usize, mask: u32, pos: i64, end: i64): i64 {
  while (pos < end) {
    const p = <u32>pos & mask;
    const off = p & 63;
    const ones = load<u64>(bits + (<usize>(p >> 6) << 3)) & (ONES << off);
    if (ones != 0) {
      pos += <i64>ctz<u64>(ones) - off;
      return pos < end ? pos : end;
    }
    pos += 64 - off;
  }
  return end;
}

/**
 * The last run starting at or before `seq` among runs [r, tail) (absolute indices), given
 * runSeq(r) ≤ seq: galloping from r (steps 1, 2, 4, …), then bisection, so finding the
 * run d runs on costs O(log d).
 */
function runAtSeq(runs: usize, rm: u32, r: i64, tail: i64, seq: i64): i64 {
  let step: i64 = 1;
  while (r + step < tail && runSeq(runs, rm, r + step) <= seq) {
    r += step;
    step <<= 1;
  }
  let hi = r + step < tail ? r + step : tail; // runSeq(hi) > seq, or hi = tail
  while (hi - r > 1) {
    const mid = r + ((hi - r) >> 1);
    if (runSeq(runs, rm, mid) <= seq) r = mid;
    else hi = mid;
  }
  return r;
}

/**
 * Writes up to `maxRuns` pairs (startOffset, length) of f64 at `dst` describing the
 * pending records from the head on (`from` < 0), or from where the last call of this
 * tracker stopped (`from` = unfinishedResume(), nothing changed in between), in offset
 * order, each pair maximal: it ends where the next record is completed, lies past an
 * offset gap (a run boundary: runs start only at gaps), or was not registered. Returns
 * the number of pairs. One call per commit: no allocation, whole words skipped (see
 * nextPending, nextCompleted), and the scan ends once every pending record is in a pair.
 */
export function unfinishedRuns(t: usize, dst: usize, maxRuns: u32, from: f64): u32 {
  const head = load<i64>(t, HEAD);
  const end = load<i64>(t, ISSUED);
  const mask = load<u32>(t, MASK);
  const bits = load<usize>(t, BITS);
  const summary = bits + (<usize>ringWords(mask) << 3);
  const runs = load<usize>(t, RUNS);
  const rm = load<u32>(t, RUN_MASK);
  const tail = load<i64>(t, RUN_TAIL);
  let r = load<i64>(t, RUN_HEAD); // invariant: runSeq(r) ≤ pos whenever pos is pending
  let pos = head;
  let left = <i64>(load<u32>(t, LEN) - load<u32>(t, BLOCKED)); // pending records not yet in a pair: 0 ends the scan
  if (from >= 0) {
    pos = <i64>from;
    left = resumeLeft;
  }
  let n: u32 = 0;
  while (n < maxRuns && left > 0) {
    pos = nextPending(bits, summary, mask, pos, end);
    if (pos >= end) break; // not reached while `left` is exact
    const stop = nextCompleted(bits, mask, pos + 1, end); // [pos, stop): pending seqs
    r = runAtSeq(runs, rm, r, tail, pos);
    // Split [pos, stop) at the run boundaries inside it.
    for (;;) {
      const runEnd = r + 1 < tail ? runSeq(runs, rm, r + 1) : end;
      const e = stop < runEnd ? stop : runEnd;
      const at = dst + (<usize>n << 4);
      store<f64>(at, <f64>(runOff(runs, rm, r) + (pos - runSeq(runs, rm, r))));
      store<f64>(at, <f64>(e - pos), 8);
      left -= e - pos;
      n++;
      pos = e;
      if (pos >= stop || n >= maxRuns) break;
      r++;
    }
  }
  resumeSeq = pos;
  resumeLeft = left;
  return n;
}

/** The seq the last unfinishedRuns() call stopped at: pass it as `from` to continue. */
export function unfinishedResume(): f64 {
  return <f64>resumeSeq;
}

// ---------------------------------------------------------------- positions

// @ts-ignore: decorator
@inline function safeOf(t: usize, head: i64, issued: i64): i64 {
  if (head >= issued) return load<i64>(t, NEXT);
  const runs = load<usize>(t, RUNS);
  const rm = load<u32>(t, RUN_MASK);
  const rh = load<i64>(t, RUN_HEAD);
  return runOff(runs, rm, rh) + (head - runSeq(runs, rm, rh));
}

/** The safe position (-1 unknown). */
export function safe(t: usize): f64 {
  return <f64>safeOf(t, load<i64>(t, HEAD), load<i64>(t, ISSUED));
}

/** The last batch's next position (or the start; -1 unknown). */
export function delivered(t: usize): f64 {
  return <f64>load<i64>(t, NEXT);
}

/** Entries held: unfinished plus completed-but-blocked. */
export function retained(t: usize): f64 {
  return <f64>load<u32>(t, LEN);
}

/** Completed entries held behind an unfinished head. */
export function blocked(t: usize): f64 {
  return <f64>load<u32>(t, BLOCKED);
}

/** Handle of the oldest retained entry. */
export function headHandle(t: usize): f64 {
  return load<f64>(t, LO);
}
