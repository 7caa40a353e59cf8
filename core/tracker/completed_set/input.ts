/**
 * The completed-set encoder's input (see completed_set.ts): the unfinished runs of [base, end),
 * validated and normalised once per encode (touching runs merged, a trailing unfinished run
 * dropped) into the shared {@link norm} that the size budget and the writers read.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../errors.ts";
import { LIMIT } from "./wire.ts";

/** Unfinished runs: pairs (startOffset, length) in `runs[0..2·count)`, sorted, disjoint, length ≥ 1, inside [base, end). */
export interface RunsInput {
  /** The committed offset the claim is bound to. */
  base: number;
  /** One past the last offset the claim covers (everything ≥ end is unfinished). */
  end: number;
  /** The unfinished runs as (start, length) pairs. */
  runs: Float64Array;
  /** How many pairs of `runs` to read. */
  count: number;
}

let scratchRuns = new Float64Array(64);

/** @internal The validated input (runs merged into `scratchRuns` where some touched), set by `normalise`. */
export const norm: { base: number; end: number; runs: Float64Array; count: number } = { base: 0, end: 0, runs: scratchRuns, count: 0 };

/** @internal Validates the input (throwing a typed error naming the value) and sets `norm`. */
export function normalise(input: RunsInput): void {
  if (input === null || typeof input !== "object") throw new InvalidArgumentError(`input must be { base, end, runs, count }; got ${describe(input)}`);
  const { base, end, runs, count } = input;
  if (!Number.isSafeInteger(base) || base < 0) throw new InvalidArgumentError(`input.base must be an integer in [0, 2^53); got ${describe(base)}`);
  // end may be 2^53 itself (one past the last offset, 2^53 − 1): an integer, not a safe one
  if (!Number.isInteger(end) || end < base || end > LIMIT) throw new InvalidArgumentError(`input.end must be an integer in [base = ${base}, 2^53]; got ${describe(end)}`);
  if (!(runs instanceof Float64Array)) throw new InvalidArgumentError(`input.runs must be a Float64Array; got ${describe(runs)}`);
  if (!Number.isSafeInteger(count) || count < 0 || 2 * count > runs.length) {
    throw new InvalidArgumentError(`input.count must be an integer in [0, runs.length / 2 = ${runs.length >> 1}]; got ${describe(count)}`);
  }
  let prevEnd = base;
  let touching = false;
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i], l = runs[2 * i + 1];
    if (!Number.isSafeInteger(s) || s < prevEnd) {
      throw new InvalidArgumentError(`input.runs[${2 * i}] (start of run ${i}) must be an integer ≥ ${prevEnd} (sorted, disjoint, ≥ base); got ${describe(s)}`);
    }
    if (!Number.isSafeInteger(l) || l < 1 || s + l > end) {
      throw new InvalidArgumentError(`input.runs[${2 * i + 1}] (length of run ${i} at ${s}) must be an integer in [1, end − start = ${end - s}]; got ${describe(l)}`);
    }
    if (i > 0 && s === prevEnd) touching = true;
    prevEnd = s + l;
  }
  norm.base = base;
  norm.end = end;
  norm.runs = runs;
  norm.count = count;
  if (touching) {
    if (scratchRuns.length < 2 * count) scratchRuns = new Float64Array(2 * count);
    let m = 0;
    for (let i = 0; i < count; i++) {
      const s = runs[2 * i], l = runs[2 * i + 1];
      if (m > 0 && scratchRuns[2 * m - 2] + scratchRuns[2 * m - 1] === s) scratchRuns[2 * m - 1] += l;
      else {
        scratchRuns[2 * m] = s;
        scratchRuns[2 * m + 1] = l;
        m++;
      }
    }
    norm.runs = scratchRuns;
    norm.count = m;
  }
  // a trailing unfinished run says nothing: beyond `end` everything is unfinished anyway
  if (norm.count > 0) {
    const i = norm.count - 1;
    if (norm.runs[2 * i] + norm.runs[2 * i + 1] === norm.end) {
      norm.end = norm.runs[2 * i];
      norm.count--;
    }
  }
}
