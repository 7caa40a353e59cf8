/**
 * A tracker's life in the WASM engine: open, release, the bytes it holds, the batch
 * scratch area, and registration (a batch's offsets appended to the ring and the runs).
 */

import { alloc, free, held, used } from "./alloc";
import { BASE, BITS, BLOCKED, FIRST, HEAD, ISSUED, LAST, LEN, LO, MASK, MIN_RING, MIN_RUNS, NEXT, RUN_HEAD, RUN_MASK, RUN_TAIL, RUNS, STRUCT_SIZE, ringBytes, runBytes } from "./layout";
import { clearSeqs, ensureRing } from "./ring";
import { openRun, skipRetiredRuns } from "./runs";

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
