/**
 * The scenarios. Each is "one pass over N records" (register every record in batches
 * of 500, complete every record once), timed with `performance.now()` around the
 * work only: inputs are made before the subject exists, and forced GC runs between
 * passes, outside the timings. A row's rate is N divided by the median pass time.
 *
 * @module
 */
import type { Subject } from "./subject.ts";
import { BATCH, type Feed, feed, type Layout } from "./data.ts";
import { memory, median, now, permutation, Rng } from "./measure.ts";

/** How a row completes records. */
export type Mode = "call" | "batch";

/** What one scenario measured for one row at one size. */
export interface Result {
  /** Records per second (each registered once and completed once), or null when not measured. */
  ops_per_sec: number | null;
  /** Bytes per record held (see the scenario), or null. */
  bytes_per_pending: number | null;
  /** How it was measured, and anything odd. */
  note: string;
  /** slow-head: milliseconds of the final completion that moves past everything. */
  final_advance_ms?: number;
  /** gaps: whether the safe position stopped short of the end with every record completed. */
  stalled?: boolean;
  /** memory, tracker rows: the cross-check — heap growth (JS engine) or growth of the linear memory used (WASM engine), per record. */
  measured_bytes_per_pending?: number;
}

/** How a scenario is run: sizes, repetitions, the row's completion mode. */
export interface Plan {
  quick: boolean;
  mode: Mode;
  /** Timed passes at size n. */
  reps(n: number): number;
  /** WASM rows: the linear memory the engine's allocator has used (its high-water mark), for the cross-check. */
  linearMemoryUsed?: () => number;
}

/** A scenario: a name, what it shows, its sizes and its run. */
export interface Scenario {
  name: string;
  about: string;
  sizes(quick: boolean): number[];
  /** Whether a row can run it (null) or why not. */
  skip?(mode: Mode): string | null;
  run(make: () => Subject, n: number, plan: Plan): Result;
}

/** Completions handed to `completeMany` at once on the batched row (random, slow-head, gaps). */
export const CHUNK = 1024;
/** Worker-pool slots in flight (batches scenario), and the per-partition completion buffer (partitions). */
export const POOL = 64;

const scratch = new Float64Array(CHUNK);

/**
 * Registers a feed; returns the key of the first record. Keys of later records are
 * `first + index` for handle-keyed subjects (the tracker hands out consecutive handles,
 * checked by {@link checkKeys}) and the offsets themselves for the baselines.
 */
function registerAll(s: Subject, f: Feed, firsts: Float64Array): number {
  const { batches, nexts } = f;
  for (let b = 0; b < batches.length; b++) firsts[b] = s.register(batches[b], nexts[b]);
  return firsts[0];
}

/** Throws unless the handles were consecutive across batches (what the key arithmetic assumes). */
function checkKeys(s: Subject, firsts: Float64Array): void {
  if (s.keys !== "handle") return;
  for (let b = 0; b < firsts.length; b++) {
    if (firsts[b] !== firsts[0] + b * BATCH) throw new Error(`handles not consecutive at batch ${b}`);
  }
}

/** Completes `order[from..to)` (record indices) per call, in chunks, or by offset. */
function completeOrder(
  s: Subject,
  mode: Mode | "offset",
  order: Int32Array,
  from: number,
  to: number,
  offsets: Float64Array,
  first: number,
): void {
  if (mode === "offset") {
    for (let j = from; j < to; j++) s.completeOffset(offsets[order[j]]);
  } else if (mode === "batch") {
    const handles = s.keys === "handle";
    let k = 0;
    for (let j = from; j < to; j++) {
      scratch[k++] = handles ? first + order[j] : offsets[order[j]];
      if (k === CHUNK) {
        s.completeMany(scratch);
        k = 0;
      }
    }
    if (k > 0) s.completeMany(scratch.subarray(0, k));
  } else if (s.keys === "handle") {
    for (let j = from; j < to; j++) s.complete(first + order[j]);
  } else {
    for (let j = from; j < to; j++) s.complete(offsets[order[j]]);
  }
}

function identity(n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

function fmtMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toFixed(3);
}

/**
 * Subjects made during the current scenario, kept alive until it ends. A tracker that
 * dies and is collected while its code is hot makes V8 throw away the optimised code
 * that referenced it ("deopt: weak objects"); no GC is forced between timed passes for
 * the same reason. Each is disposed (its storage dropped, the object kept) when its
 * pass ends. Cleared by {@link endScenario}.
 */
const keep: Subject[] = [];

/** Wraps a factory so every subject it makes lives until the scenario ends. */
export function kept<T extends Subject>(make: () => T): () => T {
  return () => {
    const s = make();
    keep.push(s);
    return s;
  };
}

/** Drops the subjects of the finished scenario. */
export function endScenario(): void {
  keep.length = 0;
}

/** No further timed pass starts once the passes of one scenario took this long (slow baselines at 10M). */
const PASS_BUDGET_MS = 10_000;
/**
 * Least time the timed passes of a scenario span in a full run. This machine's speed
 * drifts in phases of a second or so (the same pass takes 11 or 18 ms depending on the
 * moment), so the median is taken over passes spread across several phases.
 */
const SPREAD_MS = 3_000;
/** Most timed passes of one scenario. */
const MAX_PASSES = 400;
/** Least time spent warming up before the timed passes of a scenario. */
const WARM_MS = 150;

/**
 * Runs `warm` at least twice and for at least {@link WARM_MS} (smaller N, discarded: the JIT compiles the hot loops there), then
 * `pass` at least `reps` times and, in a full run, until the passes span {@link SPREAD_MS}
 * (within {@link PASS_BUDGET_MS} and {@link MAX_PASSES}); the median decides. Natural GC
 * pauses during a pass count: they are part of what a structure costs. The subjects a
 * pass made are disposed after it.
 */
function timed(
  n: number,
  plan: Plan,
  warm: () => void,
  pass: () => number,
): { ms: number; note: string } {
  // Background JIT threads share 2 cores with everything else: warm by time as well as by count.
  const disposing = <T>(run: () => T) => (): T => {
    const from = keep.length;
    const result = run();
    for (let i = from; i < keep.length; i++) keep[i].dispose();
    return result;
  };
  const w0 = now();
  for (let i = 0; i < 20 && (i < 2 || now() - w0 < WARM_MS); i++) disposing(warm)();
  const times: number[] = [];
  const reps = plan.reps(n);
  const spread = plan.quick ? 0 : SPREAD_MS;
  let spent = 0;
  for (let r = 0; r < MAX_PASSES && (r < reps || spent < spread) && (r === 0 || spent < PASS_BUDGET_MS); r++) {
    times.push(disposing(pass)());
    spent += times[times.length - 1];
  }
  const ms = median(times);
  const how = times.length > 1 ? `median of ${times.length} passes (${fmtMs(Math.min(...times))}–${fmtMs(Math.max(...times))} ms)` : "1 pass";
  return { ms, note: `${fmtMs(ms)} ms/pass, ${how}` };
}

/** Warm-up size: an eighth of N, at least 100,000 records (never more than N). */
function warmSize(n: number): number {
  return Math.min(n, Math.max(n >> 3, 100_000));
}

function rate(n: number, ms: number): number {
  return n / (ms / 1000);
}

function wrongEnd(s: Subject, f: Feed, what: string): never {
  throw new Error(`${what}: safe position ${s.position()} after every completion, expected ${f.end}`);
}

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

const inOrder = orderScenario(
  "in-order",
  "register N records in batches of 500, then complete them in delivery order",
  (q) => [q ? 100_000 : 1_000_000],
  identity,
);

const random = orderScenario(
  "random",
  "register N records in batches of 500, then complete them in a random order (a random permutation)",
  (q) => [q ? 100_000 : 1_000_000],
  (n) => permutation(n, new Rng(7)),
);

const slowHead: Scenario = {
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

const gapsTxn = gapScenario(
  "txn",
  "gaps-txn",
  "offsets with gaps of 1–2 after every transaction of 1–100 records (transaction markers); random completion order, by offset",
);
const gapsCompacted = gapScenario(
  "compacted",
  "gaps-compacted",
  "offsets with a random gap of 0–1,000,000 after every record (a compacted topic); random completion order, by offset",
);

const partitions: Scenario = {
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

const batches: Scenario = {
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

function memoryScenario(layout: Layout, name: string, about: string): Scenario {
  return {
    name,
    about,
    sizes: (q) => [q ? 1_000_000 : 10_000_000],
    run(make, n, plan) {
      const f = feed(n, layout);
      const firsts = new Float64Array(f.batches.length);
      const warm = make();
      registerAll(warm, feed(1000, layout), new Float64Array(2)); // load the code paths first
      const m0 = memory();
      const l0 = plan.linearMemoryUsed?.() ?? 0;
      const s = make();
      registerAll(s, f, firsts);
      const m1 = memory();
      const grown = plan.linearMemoryUsed ? (plan.linearMemoryUsed() - l0) / n : 0;
      const linear = plan.linearMemoryUsed
        ? `; WASM linear memory used grew ${grown.toFixed(3)} B/record (the allocator's high-water mark; it never shrinks, freed blocks are reused by later trackers)`
        : "";
      const heap = (m1.heap - m0.heap) / n, rss = (m1.rss - m0.rss) / n;
      const reported = s.bytes();
      const held = s.held();
      if (held !== n && s.keys === "handle") throw new Error(`${name}: ${held} records held, expected ${n}`);
      if (s.position() !== f.offsets[0]) throw new Error(`${name}: safe ${s.position()} with nothing completed`);
      const per = reported === undefined ? heap : reported / n;
      const note = reported === undefined
        ? `heap growth ${heap.toFixed(2)} B/record (rss ${rss.toFixed(2)})`
        : `stats().bytes ${(reported / n).toFixed(3)} B/record; heap growth ${heap.toFixed(3)}, rss ${rss.toFixed(3)} B/record${linear}`;
      // The cross-check: what the process grew by — the JS heap for the JS engine, the linear memory used for WASM
      // (the same on every runtime; Bun's heap reading counts WASM memory differently).
      const measured = reported === undefined ? {} : { measured_bytes_per_pending: plan.linearMemoryUsed ? grown : heap };
      return { ops_per_sec: null, bytes_per_pending: Math.max(0, per), note, ...measured };
    },
  };
}

const memDense = memoryScenario("dense", "memory-dense", "bytes per pending record: N registered, none completed, dense offsets");
const memTxn = memoryScenario("txn", "memory-txn", "bytes per pending record: N registered, none completed, transaction-marker gaps");
const memCompacted = memoryScenario(
  "compacted",
  "memory-compacted",
  "bytes per pending record: N registered, none completed, a gap after every record (compacted)",
);

/** Every scenario, in report order. */
export const SCENARIOS: Scenario[] = [
  inOrder,
  random,
  slowHead,
  gapsTxn,
  gapsCompacted,
  partitions,
  batches,
  memDense,
  memTxn,
  memCompacted,
];
