/**
 * The steady-state micro-benchmark, with mitata: per iteration one batch of 64 records
 * is registered and all 64 are completed in a shuffled order (a full pool of 64
 * workers), so every row holds a bounded state however long mitata runs it. mitata
 * prints its table (the human report) and `run()` returns the statistics that become
 * `@@row` lines (scenario `steady-64`, rate = 64 records / median iteration time).
 *
 * All rows share this one process (mitata compares them side by side); the pass
 * scenarios in suite.ts run each row in its own process instead.
 *
 *     node --expose-gc --import tsx bench/micro.ts
 *
 * @module
 */
import { existsSync } from "node:fs";
import { bench, run, summary } from "mitata";
import { resolveEngine } from "../core/mod.ts";
import { cli, runtimeName } from "./cli.ts";
import { BASE } from "./data.ts";
import { permutation, Rng } from "./measure.ts";
import { ROWS, subjectFactory } from "./rows.ts";

cli(
  "micro",
  `usage: node --expose-gc --import tsx bench/micro.ts
       (bun bench/micro.ts, deno run -A --v8-flags=--expose-gc bench/micro.ts)

The steady-state micro-benchmark (mitata): every row registers a batch of 64 and
completes it in a shuffled order. Prints mitata's table and @@row lines; writes nothing.

  --quick, --only LIST accepted (bench/run.mjs passes its own), no effect here
  -h, --help           this text`,
  { quick: { type: "boolean" }, only: { type: "string" } },
);

const K = 64;
const order = permutation(K, new Rng(99));
const rt = runtimeName();

let wasm: string | null = null;
try {
  const url = new URL("../core/tracker/wasm_engine.ts", import.meta.url);
  if (existsSync(url)) await import(url.href);
  resolveEngine("wasm");
} catch (error) {
  wasm = error instanceof Error ? error.message : String(error);
}

const names: string[] = [];
summary(() => {
  for (const row of ROWS) {
    if (row.startsWith("wasm") && wasm !== null) continue;
    names.push(row);
    const s = subjectFactory(row)();
    const batch = new Float64Array(K);
    const keys = new Float64Array(K);
    const batched = row === "wasm-batch";
    let next = BASE;
    bench(`${row}: register ${K} + complete ${K} shuffled`, () => {
      for (let i = 0; i < K; i++) batch[i] = next + i;
      const first = s.register(batch, next + K);
      for (let i = 0; i < K; i++) keys[i] = s.keys === "handle" ? first + order[i] : next + order[i];
      next += K;
      if (batched) s.completeMany(keys);
      else for (let i = 0; i < K; i++) s.complete(keys[i]);
    });
  }
});

console.log(`@@meta ${JSON.stringify({ runtime: rt, row: "micro" })}`);
console.log(`@@about ${JSON.stringify({ scenario: "steady-64", about: `mitata, all rows in one process: per iteration register a batch of ${K} and complete all ${K} in a shuffled order; rate = ${K} records / median iteration` })}`);
const { benchmarks } = await run({ colors: false });
for (const [i, b] of benchmarks.entries()) {
  const stats = b.runs[0]?.stats;
  if (!stats) continue;
  const row = {
    runtime: rt,
    engine: names[i],
    scenario: "steady-64",
    n: K,
    ops_per_sec: K / (stats.p50 / 1e9),
    bytes_per_pending: null,
    note: `mitata: p50 ${stats.p50.toFixed(0)} ns per ${K} records (avg ${stats.avg.toFixed(0)}, p99 ${stats.p99.toFixed(0)}), ${stats.samples.length} samples`,
  };
  console.log(`@@row ${JSON.stringify(row)}`);
}
if (wasm !== null) {
  for (const row of ["wasm", "wasm-batch"]) {
    const note = `skipped: WASM engine unavailable (${wasm})`;
    console.log(`@@row ${JSON.stringify({ runtime: rt, engine: row, scenario: "steady-64", n: K, ops_per_sec: null, bytes_per_pending: null, note })}`);
  }
}
