/**
 * The scenarios of one tracker completing in a given order: in delivery order, in a
 * random order, and behind a slow head (everything but the first record, then the first).
 *
 * @module
 */
import { type Feed, feed } from "./data.ts";
import { median, memory, now, permutation, Rng } from "./measure.ts";
import { checkKeys, completeOrder, fmtMs, identity, rate, registerAll, type Scenario, timed, warmSize, wrongEnd } from "./scenario_kit.ts";

/** Register everything, then complete in a given order; checks the end position. */
function orderScenario(
  name: string,
  about: string,
  sizes: (quick: boolean) => number[],
  order: (n: number) => Int32Array,
): Scenario {
  return {
    name,
    about,
    sizes,
    run(make, n, plan) {
      const pass = (m: number, f: Feed, ord: Int32Array) => {
        const firsts = new Float64Array(f.batches.length);
        const s = make();
        const t0 = now();
        const first = registerAll(s, f, firsts);
        completeOrder(s, plan.mode, ord, 0, m, f.offsets, first);
        const ms = now() - t0;
        checkKeys(s, firsts);
        if (s.position() !== f.end) wrongEnd(s, f, name);
        return ms;
      };
      const wn = warmSize(n);
      const wf = feed(wn, "dense"), wo = order(wn);
      const f = feed(n, "dense"), o = order(n);
      const { ms, note } = timed(n, plan, () => pass(wn, wf, wo), () => pass(n, f, o));
      return { ops_per_sec: rate(n, ms), bytes_per_pending: null, note };
    },
  };
}

/** Completion in delivery order. */
export const inOrder = orderScenario(
  "in-order",
  "register N records in batches of 500, then complete them in delivery order",
  (q) => [q ? 100_000 : 1_000_000],
  identity,
);

/** Completion in a random order. */
export const random = orderScenario(
  "random",
  "register N records in batches of 500, then complete them in a random order (a random permutation)",
  (q) => [q ? 100_000 : 1_000_000],
  (n) => permutation(n, new Rng(7)),
);

/** Everything but the first record completed, then the first: the final advance. */
export const slowHead: Scenario = {
  name: "slow-head",
  about:
    "register N records, complete all but the first in order (held behind it), then the first: " +
    "the time of that final advance, the overall rate, and bytes per held record just before it",
  sizes: (q) => (q ? [100_000, 1_000_000] : [1_000_000, 10_000_000]),
  run(make, n, plan) {
    let finalMs = 0, heldBytes = 0, heapBytes = 0, reported: number | undefined;
    const pass = (m: number, f: Feed, ord: Int32Array, measure: boolean) => {
      const firsts = new Float64Array(f.batches.length);
      const m0 = measure ? memory() : undefined;
      const s = make();
      let t0 = now();
      const first = registerAll(s, f, firsts);
      completeOrder(s, plan.mode, ord, 1, m, f.offsets, first);
      let ms = now() - t0;
      if (m0) {
        const m1 = memory();
        heapBytes = m1.heap - m0.heap;
        reported = s.bytes();
        heldBytes = Math.max(heapBytes, reported ?? 0);
      }
      if (s.position() !== f.offsets[0]) throw new Error(`slow-head: safe ${s.position()} moved past the unfinished head`);
      t0 = now();
      completeOrder(s, plan.mode, ord, 0, 1, f.offsets, first);
      const fin = now() - t0;
      ms += fin;
      finalMs = fin;
      checkKeys(s, firsts);
      if (s.position() !== f.end) wrongEnd(s, f, "slow-head");
      return ms;
    };
    // Warm-up: a slow head at a smaller N, so the advance loop is compiled before it counts.
    const wn = Math.max(1000, n >> 4);
    const wf = feed(wn, "dense"), wo = identity(wn);
    const f = feed(n, "dense"), o = identity(n);
    const finals: number[] = [];
    let passes = 0;
    const { ms, note } = timed(n, plan, () => pass(wn, wf, wo, false), () => {
      const t = pass(n, f, o, ++passes === 1);
      finals.push(finalMs);
      return t;
    });
    const fin = median(finals);
    const mem = reported === undefined
      ? `heap growth ${(heapBytes / n).toFixed(2)} B/record held`
      : `stats().bytes ${(reported / n).toFixed(3)} B/record, heap growth ${(heapBytes / n).toFixed(3)} B/record`;
    return {
      ops_per_sec: rate(n, ms),
      bytes_per_pending: heldBytes / n,
      final_advance_ms: fin,
      note: `${note}; final advance ${fmtMs(fin)} ms (median); ${mem}`,
    };
  },
};
