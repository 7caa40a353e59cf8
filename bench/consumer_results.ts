/**
 * bench:consumer's arithmetic over its children's results (bench/consumer_run.ts): several
 * processes' rounds pooled into one result, each variant's medians and ratio to the baseline
 * (a table's rows), and the async variants' ratios to their sync ones, paired per round.
 *
 * @module
 */
import type { Client, Rate, RunResult, Variant } from "./consumer_run.ts";

/** What is paired: a runner ordering's async ÷ sync, or the plain loop's (`plain-async` ÷ `plain`). */
export type PairName = "unordered" | "key" | "plain";
/** The async variants and the sync variant each is paired with, per round. */
export const PAIRS: Array<{ ordering: PairName; sync: Variant; async: Variant }> = [
  { ordering: "unordered", sync: "unordered", async: "unordered-async" },
  { ordering: "key", sync: "key", async: "key-async" },
  // the async floor through the client: what a promise and a then() a record cost with no runner
  { ordering: "plain", sync: "plain", async: "plain-async" },
];

/** The median of `xs` (the mean of the middle two for an even count). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * The results of processes run one after another (`--processes`) as one: the rounds (and
 * stalls) of every process in turn, the load average before the first and after the last, and
 * how many rounds each ran (`processRounds`, for each process's own figures).
 */
export function pool(runs: RunResult[]): RunResult {
  if (runs.length === 1) return runs[0];
  let before = 0;
  const stalls = runs.flatMap((r) => {
    const shifted = r.stalls.map((x) => ({ ...x, round: x.round + before }));
    before += r.rounds.length;
    return shifted;
  });
  return {
    ...runs[0],
    rounds: runs.flatMap((r) => r.rounds),
    stalls,
    loadAverage: { before: runs[0].loadAverage.before, after: runs[runs.length - 1].loadAverage.after },
    processRounds: runs.map((r) => r.rounds.length),
  };
}

/** `result`'s rounds per process, in order (one list for a single process). */
function byProcess(result: RunResult): RunResult["rounds"][] {
  const counts = result.processRounds ?? [result.rounds.length];
  let from = 0;
  return counts.map((n) => result.rounds.slice(from, (from += n)));
}

/**
 * The name of a variant in `client`'s table: the baseline is the client's own plain loop,
 * `eachBatch` for KafkaJS and Confluent's client, the `consume()` stream for @platformatic/kafka.
 */
function variantName(client: Client, variant: Variant, name: string): string {
  const loop = client === "platformatic" ? "plain consume() stream" : "plain eachBatch";
  if (variant === "plain") return `${loop}, no commits`;
  if (variant === "plain-autocommit") return `${loop}, ${client === "platformatic" ? "autocommit" : "autoCommit"}`;
  return name;
}

/** One row of a runtime's table. */
export interface Row {
  name: string;
  variant: Variant;
  medianRecordsPerSec: number;
  medianRecordsPerCpuSec: number;
  ratioToPlain: { wall: number; cpu: number };
  medianCommits: number;
  runs: number[];
  runsPerCpuSec: number[];
  /** Passes of this variant that stalled (left out of the medians). */
  stalled: number;
}

/** The rows of `result`'s table: each of `variants`, its medians over the rounds and its ratio to `base`'s. */
export function rows(result: RunResult, variants: ReadonlyArray<{ variant: Variant; name: string }>, base: Variant): Row[] {
  const of = (v: Variant, k: keyof Rate): number[] => result.rounds.flatMap((r) => (r[v] ? [r[v]![k]] : []));
  const b = { wall: median(of(base, "wall")), cpu: median(of(base, "cpu")) };
  return variants.map(({ variant, name }) => {
    const wall = median(of(variant, "wall")), cpu = median(of(variant, "cpu"));
    return {
      name: variantName(result.client, variant, name),
      variant,
      medianRecordsPerSec: Math.round(wall),
      medianRecordsPerCpuSec: Math.round(cpu),
      ratioToPlain: { wall: +(wall / b.wall).toFixed(3), cpu: +(cpu / b.cpu).toFixed(3) },
      medianCommits: median(of(variant, "commits")),
      runs: of(variant, "wall").map(Math.round),
      runsPerCpuSec: of(variant, "cpu").map(Math.round),
      stalled: result.stalls.filter((x) => x.variant === variant).length,
    };
  });
}

/** One ordering's async handler ÷ its sync handler, paired per round (that round's two passes). */
export interface Paired {
  /** Median over the rounds of async ÷ sync, records per CPU-second. */
  medianCpuRatio: number;
  /** The lowest and highest round's async ÷ sync per CPU-second. */
  min: number;
  max: number;
  /** Median over the rounds of async ÷ sync, records per wall-clock second. */
  medianWallRatio: number;
  /** Per round, in order, async ÷ sync per CPU-second (a round with a stalled pass on either side left out). */
  rounds: number[];
  /** Median records per wall-clock second of the async passes of those rounds. */
  medianAsyncRecordsPerSec: number;
  /** With several processes: each process's median of async ÷ sync per CPU-second. */
  processMedians?: number[];
}

/**
 * The paired async ÷ sync figures of each ordering that ran both ways in `result`'s rounds
 * (the caller asks for none under `--async-handler`, which makes the sync variants async too).
 */
export function paired(result: RunResult): Partial<Record<PairName, Paired>> {
  const out: Partial<Record<PairName, Paired>> = {};
  for (const { ordering, sync, async } of PAIRS) {
    const both = (rounds: RunResult["rounds"]) => rounds.filter((r) => r[sync] && r[async]);
    const ratio = (rounds: RunResult["rounds"], k: keyof Rate): number[] => both(rounds).map((r) => r[async]![k] / r[sync]![k]);
    const cpu = ratio(result.rounds, "cpu");
    if (cpu.length === 0) continue;
    const perProcess = byProcess(result).map((rounds) => ratio(rounds, "cpu")).map((xs) => (xs.length === 0 ? NaN : +median(xs).toFixed(3)));
    out[ordering] = {
      medianCpuRatio: +median(cpu).toFixed(3),
      min: +Math.min(...cpu).toFixed(3),
      max: +Math.max(...cpu).toFixed(3),
      medianWallRatio: +median(ratio(result.rounds, "wall")).toFixed(3),
      rounds: cpu.map((x) => +x.toFixed(3)),
      medianAsyncRecordsPerSec: Math.round(median(both(result.rounds).map((r) => r[async]!.wall))),
      ...(result.processRounds !== undefined ? { processMedians: perProcess } : {}),
    };
  }
  return out;
}
