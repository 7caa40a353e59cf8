/**
 * The scenarios of offsets with gaps (transaction markers, a compacted topic), completed
 * by offset in a random order: a naive watermark stalls at the first gap.
 *
 * @module
 */
import { type Feed, feed, type Layout } from "./data.ts";
import { now, permutation, Rng } from "./measure.ts";
import { completeOrder, rate, registerAll, type Scenario, timed, warmSize, wrongEnd } from "./scenario_kit.ts";

function gapScenario(layout: Layout, name: string, about: string): Scenario {
  return {
    name,
    about,
    sizes: (q) => [q ? 100_000 : 1_000_000],
    skip: (mode) => (mode === "batch" ? "no batched complete-by-offset API (completeMany takes handles)" : null),
    run(make, n, plan) {
      let stalled = false, held = 0, at = 0;
      const pass = (m: number, f: Feed, ord: Int32Array) => {
        const firsts = new Float64Array(f.batches.length);
        const s = make();
        const t0 = now();
        registerAll(s, f, firsts);
        completeOrder(s, "offset", ord, 0, m, f.offsets, 0);
        const ms = now() - t0;
        at = s.position();
        stalled = at < f.offsets[m - 1] + 1;
        held = s.held();
        // the naive watermark ends at last + 1 at best (it never learns the batch's next)
        if (!stalled && at !== f.end && !(s.keys === "offset" && at === f.offsets[m - 1] + 1)) wrongEnd(s, f, name);
        return ms;
      };
      const wn = warmSize(n);
      const wf = feed(wn, layout, 11), wo = permutation(wn, new Rng(5));
      const f = feed(n, layout), o = permutation(n, new Rng(7));
      const { ms, note } = timed(n, plan, () => pass(wn, wf, wo), () => pass(n, f, o));
      const stall = stalled
        ? `STALLED at offset ${at} (first offset ${f.offsets[0]}, end ${f.end}): ${held} completed records stuck`
        : "never stalled";
      return { ops_per_sec: rate(n, ms), bytes_per_pending: null, stalled, note: `${stall}; ${note}` };
    },
  };
}

/** Gaps of 1–2 after every transaction. */
export const gapsTxn = gapScenario(
  "txn",
  "gaps-txn",
  "offsets with gaps of 1–2 after every transaction of 1–100 records (transaction markers); random completion order, by offset",
);
/** A random gap after every record. */
export const gapsCompacted = gapScenario(
  "compacted",
  "gaps-compacted",
  "offsets with a random gap of 0–1,000,000 after every record (a compacted topic); random completion order, by offset",
);
