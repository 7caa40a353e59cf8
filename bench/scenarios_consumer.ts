/**
 * The consumer-shaped scenarios: many partitions with interleaved completions, and one
 * partition fed batch by batch to a pool of in-flight slots.
 *
 * @module
 */
import type { Subject } from "./subject.ts";
import { BATCH, type Feed, feed } from "./data.ts";
import { now, permutation, Rng } from "./measure.ts";
import { checkKeys, POOL, rate, registerAll, type Scenario, timed, warmSize, wrongEnd } from "./scenario_kit.ts";

/** P trackers, completions round-robin across them. */
export const partitions: Scenario = {
  name: "partitions",
  about:
    "P trackers × R records each (batches of 500, all registered first), completions interleaved " +
    "round-robin across partitions, random order within each; n = P × R",
  sizes: (q) => [q ? 1_000 * 200 : 1_000 * 10_000],
  run(make, n, plan) {
    const P = 1_000, R = n / P;
    const pass = (r: number, f: Feed, ord: Int32Array) => {
      const subs: Subject[] = [];
      const firsts = new Float64Array(f.batches.length);
      const first = new Float64Array(P);
      const buf = plan.mode === "batch" ? new Float64Array(P * POOL) : undefined;
      const fill = new Int32Array(P);
      for (let p = 0; p < P; p++) subs.push(make());
      const total = P * r;
      const t0 = now();
      for (let p = 0; p < P; p++) first[p] = registerAll(subs[p], f, firsts);
      const offsets = f.offsets;
      const handles = subs[0].keys === "handle";
      if (buf) {
        for (let j = 0; j < total; j++) {
          const p = j % P, idx = ord[j];
          const at = p * POOL + fill[p]++;
          buf[at] = handles ? first[p] + idx : offsets[idx];
          if (fill[p] === POOL) {
            subs[p].completeMany(buf.subarray(p * POOL, at + 1));
            fill[p] = 0;
          }
        }
        for (let p = 0; p < P; p++) if (fill[p] > 0) subs[p].completeMany(buf.subarray(p * POOL, p * POOL + fill[p]));
      } else if (handles) {
        for (let j = 0; j < total; j++) subs[j % P].complete(first[j % P] + ord[j]);
      } else {
        for (let j = 0; j < total; j++) subs[j % P].complete(offsets[ord[j]]);
      }
      const ms = now() - t0;
      for (const s of subs) if (s.position() !== f.end) wrongEnd(s, f, "partitions");
      checkKeys(subs[0], firsts);
      return ms;
    };
    // Completion order: step j completes partition j % P's record ord[j] (its own random permutation).
    const order = (r: number) => {
      const ord = new Int32Array(P * r);
      const rng = new Rng(13);
      for (let p = 0; p < P; p++) {
        const perm = permutation(r, rng);
        for (let i = 0; i < r; i++) ord[i * P + p] = perm[i];
      }
      return ord;
    };
    const wr = Math.max(100, Math.min(R, Math.ceil(warmSize(n) / P)));
    const wf = feed(wr, "dense"), wo = order(wr);
    const f = feed(R, "dense"), o = order(R);
    const { ms, note } = timed(n, plan, () => pass(wr, wf, wo), () => pass(R, f, o));
    return { ops_per_sec: rate(n, ms), bytes_per_pending: null, note: `${P} partitions × ${R}; ${note}` };
  },
};

/** Batches registered as delivery reaches them, a pool of 64 finishing in random order. */
export const batches: Scenario = {
  name: "batches",
  about:
    "a consumer: batches of 500 registered as delivery reaches them, records dispatched in delivery order " +
    "to a pool of 64 in-flight slots that finish in random order (a finished slot takes the next record)",
  sizes: (q) => [q ? 100_000 : 1_000_000],
  run(make, n, plan) {
    // Which record finishes at each step: a random one of the (up to) 64 in flight.
    const simulate = (m: number, seed: number) => {
      const rng = new Rng(seed);
      const slots: number[] = [];
      let d = 0;
      while (d < m && slots.length < POOL) slots.push(d++);
      const ord = new Int32Array(m);
      for (let j = 0; j < m; j++) {
        const k = rng.int(slots.length);
        ord[j] = slots[k];
        if (d < m) slots[k] = d++;
        else {
          slots[k] = slots[slots.length - 1];
          slots.pop();
        }
      }
      return ord;
    };
    const pass = (m: number, f: Feed, ord: Int32Array) => {
      const s = make();
      const { batches, nexts, offsets } = f;
      const firsts = new Float64Array(batches.length);
      const handles = s.keys === "handle";
      const batched = plan.mode === "batch";
      const buf = new Float64Array(POOL);
      let k = 0, d = 0, first = 0;
      const t0 = now();
      // dispatching record d needs its batch registered
      for (; d < m && d < POOL; d++) {
        if (d % BATCH === 0) firsts[d / BATCH] = s.register(batches[d / BATCH], nexts[d / BATCH]);
      }
      first = firsts[0];
      for (let j = 0; j < m; j++) {
        const idx = ord[j];
        const key = handles ? first + idx : offsets[idx];
        if (batched) {
          buf[k++] = key;
          if (k === POOL) {
            s.completeMany(buf);
            k = 0;
          }
        } else s.complete(key);
        if (d < m) {
          if (d % BATCH === 0) firsts[d / BATCH] = s.register(batches[d / BATCH], nexts[d / BATCH]);
          d++;
        }
      }
      if (k > 0) s.completeMany(buf.subarray(0, k));
      const ms = now() - t0;
      checkKeys(s, firsts);
      if (s.position() !== f.end) wrongEnd(s, f, "batches");
      return ms;
    };
    const wn = warmSize(n);
    const wf = feed(wn, "dense"), wo = simulate(wn, 3);
    const f = feed(n, "dense"), o = simulate(n, 17);
    const { ms, note } = timed(n, plan, () => pass(wn, wf, wo), () => pass(n, f, o));
    return {
      ops_per_sec: rate(n, ms),
      bytes_per_pending: null,
      note: `${note}${plan.mode === "batch" ? `; completeMany every ${POOL} completions` : ""}`,
    };
  },
};
