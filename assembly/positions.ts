/**
 * The positions a tracker reports: safe, delivered, retained, blocked, and the head's handle.
 */

import { BLOCKED, HEAD, ISSUED, LEN, LO, NEXT, RUN_HEAD, RUN_MASK, RUNS, runOff, runSeq } from "./layout";

// @ts-ignore: decorator
@inline export function safeOf(t: usize, head: i64, issued: i64): i64 {
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
