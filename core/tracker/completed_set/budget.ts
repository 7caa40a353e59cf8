/**
 * The completed-set encoder's size budget (see completed_set.ts): the smallest codes for the
 * runs format, the smaller of runs and bitmap when the whole set fits, and otherwise the longest
 * prefix that fits, in whichever format keeps more. Reads the normalised input {@link norm};
 * its answer goes into {@link plan}.
 *
 * @module
 */
import { FORMAT_BITMAP, FORMAT_RUNS, HEADER_BITS, LIMIT } from "./wire.ts";
import { codeLength, largestFitting } from "./codes.ts";
import { norm } from "./input.ts";
import { Tally } from "./tally.ts";

const tallyU = new Tally();
const tallyF = new Tally();
const bestU = { code: 0, size: 0 };
const bestF = { code: 0, size: 0 };

// The virtual run sequence of the normalised input: [F_head if the first run is finished], then
// U_0, F_0, U_1, F_1, …, U_{m−1}, F_{m−1}; F_i runs from the end of U_i to the next start (or end).

/** Tallies the runs that start before `cut` (all when cut ≥ end). */
function tallyRuns(cut: number): void {
  tallyU.reset();
  tallyF.reset();
  const { base, end, runs, count } = norm;
  const first = count > 0 ? runs[0] : end;
  if (first > base) tallyF.add(first - base - 1);
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    const l = runs[2 * i + 1];
    tallyU.add(l - 1);
    const fs = s + l;
    if (fs >= cut) break;
    const fe = i + 1 < count ? runs[2 * i + 2] : end;
    tallyF.add(fe - fs - 1);
  }
}

/** Where the runs format, with codes (cu, cf), must stop to fit `capacity` payload bits; −1 if nothing fits. */
function runsCut(cu: number, cf: number, capacity: number): number {
  const { base, end, runs, count } = norm;
  let used = HEADER_BITS;
  let reached = -1;
  const first = count > 0 ? runs[0] : end;
  if (first > base) {
    const v = first - base - 1;
    const c = codeLength(v, cf);
    if (used + c > capacity) {
      const fit = Math.min(largestFitting(capacity - used, cf), v);
      return fit < 0 ? -1 : base + fit + 1;
    }
    used += c;
    reached = first;
  }
  for (let i = 0; i < count; i++) {
    const l = runs[2 * i + 1];
    used += codeLength(l - 1, cu);
    if (used > capacity) return reached;
    const fs = runs[2 * i] + l;
    const fe = i + 1 < count ? runs[2 * i + 2] : end;
    const v = fe - fs - 1;
    const c = codeLength(v, cf);
    if (used + c > capacity) {
      const fit = Math.min(largestFitting(capacity - used, cf), v);
      return fit < 0 ? reached : fs + fit + 1;
    }
    used += c;
    reached = fe;
  }
  return reached;
}

/** Where the bitmap must stop to fit `capacity` payload bits (trimmed to a finished offset); −1 if nothing. */
function bitmapCut(capacity: number): number {
  const { base, end, runs, count } = norm;
  let cut = Math.min(end, base + capacity);
  // cut inside or right after an unfinished run: trim to its start
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    if (s + runs[2 * i + 1] >= cut) {
      cut = s;
      break;
    }
  }
  return cut > base ? cut : -1;
}

/** @internal Finished offsets of [base, cut). */
export function finishedBelow(cut: number): number {
  const { base, runs, count } = norm;
  let unfinished = 0;
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) break;
    unfinished += Math.min(runs[2 * i + 1], cut - s);
  }
  return cut - base - unfinished;
}

/** @internal What {@link choose} decided: the format, the cut, the runs' codes, the payload's bits when uncut. */
export const plan: { format: number; cut: number; cu: number; cf: number; bits: number } = { format: 0, cut: 0, cu: 0, cf: 0, bits: 0 };

/**
 * @internal Chooses the encoding of the normalised input (with base < end) for `capacity`
 * payload bits into {@link plan}; false when nothing above base fits.
 */
export function choose(capacity: number): boolean {
  const { base, end } = norm;
  tallyRuns(LIMIT);
  tallyU.choose(bestU);
  tallyF.choose(bestF);
  let cu = bestU.code, cf = bestF.code;
  const runsBits = HEADER_BITS + bestU.size + bestF.size;
  const bitmapBits = end - base;

  let format: number;
  let cut = end;
  if (runsBits <= capacity || bitmapBits <= capacity) {
    format = runsBits < bitmapBits ? FORMAT_RUNS : FORMAT_BITMAP;
  } else {
    // over budget: the longest prefix, whichever format keeps more
    let runsEnd = runsCut(cu, cf, capacity);
    // codes chosen for the whole set may not suit the prefix: choose again for it (at least the
    // first finished run), keep the better
    const { runs, count } = norm;
    const firstFinished = count > 0 && runs[0] === base ? base + runs[1] : base;
    tallyRuns(runsEnd > base ? runsEnd : firstFinished + 1);
    tallyU.choose(bestU);
    tallyF.choose(bestF);
    const again = runsCut(bestU.code, bestF.code, capacity);
    if (again > runsEnd) {
      runsEnd = again;
      cu = bestU.code;
      cf = bestF.code;
    }
    const bitmapEnd = bitmapCut(capacity);
    if (runsEnd <= base && bitmapEnd <= base) return false;
    if (runsEnd >= bitmapEnd) {
      format = FORMAT_RUNS;
      cut = runsEnd;
    } else {
      format = FORMAT_BITMAP;
      cut = bitmapEnd;
    }
  }
  plan.format = format;
  plan.cut = cut;
  plan.cu = cu;
  plan.cf = cf;
  plan.bits = format === FORMAT_RUNS ? runsBits : bitmapBits;
  return true;
}
