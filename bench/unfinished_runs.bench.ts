/**
 * `Tracker.unfinishedRuns` per call, with mitata, on both engines: what reading the
 * unfinished runs costs on every commit (for the completed set in the commit metadata).
 * The trackers are set up once (not measured); each iteration is one call that reads
 * every pair (`maxRuns` 4,096) or the first 256.
 *
 * - `1M, 2,000 pending`         1,000,000 retained dense offsets, 2,000 random records
 *                               pending (the head among them), the rest completed
 * - `1M, 2,000 pending, gaps`   the same with a gap after every 10th offset (100,000 runs
 *                               in the offset table, as transaction markers leave)
 * - `1M, 2,000 pending, max 256` the first 256 pairs only (a metadata budget)
 * - `slow head behind 10M`      10,000,000 retained, all completed but the head (the scan
 *                               ends once every pending record is in a pair: O(1))
 * - `10M completed between two`  the same with the last record pending too: the scan skips
 *                               the 10M completed records via the summary level
 *
 * Prints mitata's table, then microseconds per call (mitata's median) and the pairs read.
 *
 *     node --import tsx bench/unfinished_runs.bench.ts
 *     npx bun bench/unfinished_runs.bench.ts
 *     npx deno run -A bench/unfinished_runs.bench.ts
 *
 * Options: `--filter REGEX` (rows to run).
 *
 * @module
 */
import { bench, run } from "mitata";
import { Tracker } from "../core/mod.ts";
import { cli, runtimeName, usageError } from "./cli.ts";
import { rng } from "../test/unit/random.ts";

const o = cli(
  "unfinished_runs.bench",
  `usage: node --import tsx bench/unfinished_runs.bench.ts [--filter REGEX]
       (bun bench/unfinished_runs.bench.ts …, deno run -A bench/unfinished_runs.bench.ts …)

One unfinishedRuns call per iteration on both engines (mitata). Prints tables; writes nothing.

  --filter REGEX       rows to run (default all)
  -h, --help           this text`,
  { filter: { type: "string" } },
);
const FILTER = (() => {
  try {
    return new RegExp(o.filter ?? ".");
  } catch {
    return usageError("unfinished_runs.bench", `--filter must be a regular expression; got ${JSON.stringify(o.filter)}`);
  }
})();
const runtime = runtimeName();
const START = 1_000;

/**
 * A tracker with `n` retained records, those at the relative positions in `pending`
 * unfinished and the rest completed; offsets dense, or with a gap after every `gapEvery`th.
 */
function tracker(engine: "js" | "wasm", n: number, pending: Set<number>, gapEvery = 0): Tracker {
  const t = new Tracker({ start: START, engine, capacity: Math.max(n, 16_777_216) });
  if (t.engine !== engine) throw new Error(`engine ${engine} is not available`);
  const offsets = new Float64Array(n);
  for (let i = 0, o = START; i < n; i++, o++) {
    offsets[i] = o;
    if (gapEvery > 0 && i % gapEvery === gapEvery - 1) o++;
  }
  const first = t.register(offsets, offsets[n - 1] + 1);
  const done = new Float64Array(n - pending.size);
  for (let i = 0, k = 0; i < n; i++) if (!pending.has(i)) done[k++] = first + i;
  t.completeMany(done);
  if (t.stats().retained !== n || t.stats().pending !== pending.size) throw new Error("setup: wrong counts");
  return t;
}

function randomPending(n: number, count: number, seed: number): Set<number> {
  const rand = rng(seed);
  const s = new Set<number>([0]); // the head: everything stays retained
  while (s.size < count) s.add(rand(n));
  return s;
}

interface Row {
  name: string;
  engine: "js" | "wasm";
  make: () => Tracker;
  maxRuns: number;
}

const M = 1_000_000;
const pending2k = randomPending(M, 2_000, 13);
const rows: Row[] = [];
for (const engine of ["js", "wasm"] as const) {
  rows.push(
    { name: `${engine}: 1M, 2,000 pending`, engine, make: () => tracker(engine, M, pending2k), maxRuns: 4_096 },
    { name: `${engine}: 1M, 2,000 pending, gaps`, engine, make: () => tracker(engine, M, pending2k, 10), maxRuns: 4_096 },
    { name: `${engine}: 1M, 2,000 pending, max 256`, engine, make: () => tracker(engine, M, pending2k), maxRuns: 256 },
    { name: `${engine}: slow head behind 10M`, engine, make: () => tracker(engine, 10_000_000, new Set([0])), maxRuns: 4_096 },
    {
      name: `${engine}: 10M completed between two`,
      engine,
      make: () => tracker(engine, 10_000_002, new Set([0, 10_000_001])),
      maxRuns: 4_096,
    },
  );
}

const pairs = new Map<string, number>();
const live: Tracker[] = [];
for (const row of rows) {
  if (!FILTER.test(row.name)) continue;
  const t = row.make();
  live.push(t);
  const out = new Float64Array(2 * row.maxRuns);
  pairs.set(row.name, t.unfinishedRuns(out, row.maxRuns));
  bench(row.name, () => t.unfinishedRuns(out, row.maxRuns));
}

const { benchmarks } = await run({ colors: false });
console.log(`\n${runtime}: one unfinishedRuns call, mitata's median (p99)`);
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (!stats) continue;
  const us = (ns: number) => (ns / 1e3).toFixed(ns < 10_000 ? 2 : 1);
  console.log(`  ${trial.alias.padEnd(40)} ${us(stats.p50).padStart(8)} µs  (${us(stats.p99)})  ${pairs.get(trial.alias)} pairs`);
}
for (const t of live) t.revoke();
