/**
 * The unfinished runs: the pending records from the head on as (start offset, length)
 * pairs, written in one call per commit, resumable where the output area was full.
 */

import { BITS, BLOCKED, HEAD, ISSUED, LEN, MASK, ONES, RUN_HEAD, RUN_MASK, RUN_TAIL, RUNS, ringWords, runOff, runSeq } from "./layout";
import { runAtSeq } from "./runs";

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
