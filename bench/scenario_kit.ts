/**
 * What every bench scenario shares: the result and plan types, registration and
 * completion in a given order, the subjects kept alive until a scenario ends, and the
 * timed passes (warm-up, then the median of passes spread over time).
 *
 * @module
 */
import type { Subject } from "./subject.ts";
import { BATCH, type Feed } from "./data.ts";
import { median, now } from "./measure.ts";

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
export function registerAll(s: Subject, f: Feed, firsts: Float64Array): number {
  const { batches, nexts } = f;
  for (let b = 0; b < batches.length; b++) firsts[b] = s.register(batches[b], nexts[b]);
  return firsts[0];
}

/** Throws unless the handles were consecutive across batches (what the key arithmetic assumes). */
export function checkKeys(s: Subject, firsts: Float64Array): void {
  if (s.keys !== "handle") return;
  for (let b = 0; b < firsts.length; b++) {
    if (firsts[b] !== firsts[0] + b * BATCH) throw new Error(`handles not consecutive at batch ${b}`);
  }
}

/** Completes `order[from..to)` (record indices) per call, in chunks, or by offset. */
export function completeOrder(
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

/** The order 0, 1, …, n - 1 (delivery order). */
export function identity(n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

/** Milliseconds for a note: whole above 100, one decimal above 1, else three. */
export function fmtMs(ms: number): string {
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
export function timed(
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
export function warmSize(n: number): number {
  return Math.min(n, Math.max(n >> 3, 100_000));
}

/** Records per second of `n` records in `ms`. */
export function rate(n: number, ms: number): number {
  return n / (ms / 1000);
}

/** Throws: the subject's safe position is not the feed's end after every completion. */
export function wrongEnd(s: Subject, f: Feed, what: string): never {
  throw new Error(`${what}: safe position ${s.position()} after every completion, expected ${f.end}`);
}
