/**
 * A decoded completed set (see completed_set.ts): which offsets of [base, end) a commit's
 * metadata verifiably claims finished, and the union of two such claims.
 *
 * @module
 */

/** A decoded claim: which offsets of [base, end) are finished. Immutable. */
export class CompletedSet {
  /** The committed offset the claim is bound to. */
  readonly base: number;
  /** One past the last offset it claims anything about. */
  readonly end: number;
  readonly #runs: Float64Array;
  readonly #count: number;
  readonly #finished: number;
  #cursor = 0; // index of the first run that ends after the last query

  /** @internal use `decodeCompletedSet`; runs must be sorted, disjoint, inside [base, end). */
  constructor(base: number, end: number, runs: Float64Array, count: number) {
    this.base = base;
    this.end = end;
    this.#runs = runs;
    this.#count = count;
    let unfinished = 0;
    for (let i = 0; i < count; i++) unfinished += runs[2 * i + 1];
    this.#finished = end - base - unfinished;
  }

  /** Whether the claim says `offset` is finished. O(1) amortised for increasing queries, O(log runs) otherwise. */
  isFinished(offset: number): boolean {
    if (!(offset >= this.base && offset < this.end)) return false; // NaN, below base, ≥ end: unknown
    const runs = this.#runs;
    let i = this.#cursor;
    if (i > 0 && runs[2 * i - 2] + runs[2 * i - 1] > offset) i = this.#search(offset); // went back
    else {
      let steps = 0;
      while (i < this.#count && runs[2 * i] + runs[2 * i + 1] <= offset) {
        i++;
        if (++steps === 8) {
          i = this.#search(offset);
          break;
        }
      }
    }
    this.#cursor = i;
    return !(i < this.#count && runs[2 * i] <= offset);
  }

  /** The index of the first run that ends after `offset`. */
  #search(offset: number): number {
    const runs = this.#runs;
    let lo = 0, hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runs[2 * mid] + runs[2 * mid + 1] <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many offsets of [base, end) it claims finished (gaps included). */
  finishedCount(): number {
    return this.#finished;
  }

  /** Number of unfinished runs inside [base, end). */
  get runCount(): number {
    return this.#count;
  }

  /**
   * Copies the unfinished runs inside [from, end) as (start, length) pairs into `out` (a run that
   * contains `from` is clipped to start there), at most `max` pairs; returns how many. With
   * `base: from, end: set.end` they are a `RunsInput` for re-encoding at a later commit.
   */
  unfinishedRuns(from: number, out: Float64Array, max: number): number {
    const runs = this.#runs;
    const limit = Math.min(max, out.length >> 1);
    let i = from <= this.base ? 0 : this.#search(from);
    let n = 0;
    for (; i < this.#count && n < limit; i++) {
      const s = runs[2 * i], e = s + runs[2 * i + 1];
      const cs = s < from ? from : s;
      if (e <= cs) continue;
      out[2 * n] = cs;
      out[2 * n + 1] = e - cs;
      n++;
    }
    return n;
  }
}

/**
 * The union of two claims about one partition: an offset is finished when either says
 * so. Its range is [min base, max end); outside a claim's own range that claim says
 * nothing (unfinished). Used to add what this consumer itself finished in an earlier
 * assignment of the partition (that ended before its commit was acknowledged) to what
 * the committed metadata claims.
 */
export function unionOfClaims(a: CompletedSet, b: CompletedSet): CompletedSet {
  const base = Math.min(a.base, b.base), end = Math.max(a.end, b.end);
  // Each side's unfinished intervals over [base, end): its runs, plus what lies outside its range.
  const side = (s: CompletedSet): Float64Array => {
    const runs = new Float64Array(2 * s.runCount + 4);
    let n = 0;
    if (s.base > base) (runs[0] = base), (runs[1] = s.base - base), (n = 1);
    n += s.unfinishedRuns(s.base, runs.subarray(2 * n), s.runCount);
    if (s.end < end) {
      if (n > 0 && runs[2 * n - 2] + runs[2 * n - 1] === s.end) runs[2 * n - 1] += end - s.end;
      else (runs[2 * n] = s.end), (runs[2 * n + 1] = end - s.end), n++;
    }
    return runs.subarray(0, 2 * n);
  };
  const x = side(a), y = side(b);
  const out = new Float64Array(Math.max(2, x.length + y.length));
  let i = 0, j = 0, n = 0;
  while (i < x.length && j < y.length) {
    const s = Math.max(x[i], y[j]);
    const ex = x[i] + x[i + 1], ey = y[j] + y[j + 1];
    const e = Math.min(ex, ey);
    if (s < e) {
      if (n > 0 && out[2 * n - 2] + out[2 * n - 1] === s) out[2 * n - 1] += e - s;
      else (out[2 * n] = s), (out[2 * n + 1] = e - s), n++;
    }
    if (ex <= ey) i += 2;
    else j += 2;
  }
  // A trailing unfinished run says nothing a shorter end would not: end there.
  let last = end;
  if (n > 0 && out[2 * n - 2] + out[2 * n - 1] === end) last = out[2 * (--n)];
  return new CompletedSet(base, Math.max(base, last), out.subarray(0, 2 * n), n);
}
