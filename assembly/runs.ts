/**
 * The runs: a ring of (first seq, first offset) pairs, one opened at each gap in the
 * offsets; growth, retirement behind the head, and the two searches (by offset, by seq).
 */

import { alloc, free } from "./alloc";
import { RUN_HEAD, RUN_MASK, RUN_TAIL, RUNS, runBytes, runOff, runSeq } from "./layout";

export function openRun(t: usize, seq: i64, offset: i64): void {
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
export function skipRetiredRuns(t: usize, head: i64): void {
  const runs = load<usize>(t, RUNS);
  const rm = load<u32>(t, RUN_MASK);
  const tail = load<i64>(t, RUN_TAIL);
  let rh = load<i64>(t, RUN_HEAD);
  while (rh + 1 < tail && runSeq(runs, rm, rh + 1) <= head) rh++;
  store<i64>(t, rh, RUN_HEAD);
}

/**
 * The last run starting at or before offset `o` among runs [lo, hi] (absolute indices),
 * given runOff(lo) ≤ o. A few interpolation steps first (offsets grow about evenly over
 * runs in real topics, so they land next to the answer), then bisection. Every probe
 * lies in (lo, hi], so each step narrows the range.
 */
export function findRun(runs: usize, rm: u32, lo: i64, hi: i64, o: i64): i64 {
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

/**
 * The last run starting at or before `seq` among runs [r, tail) (absolute indices), given
 * runSeq(r) ≤ seq: galloping from r (steps 1, 2, 4, …), then bisection, so finding the
 * run d runs on costs O(log d).
 */
export function runAtSeq(runs: usize, rm: u32, r: i64, tail: i64, seq: i64): i64 {
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
