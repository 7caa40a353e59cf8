/**
 * Runs every scenario for ONE row on the current runtime (Node via tsx, Bun or Deno)
 * and prints a line per result, plus a machine line `@@row {json}` that `run.mjs`
 * collects. One row per process: the scenario loops then only ever see one class,
 * so no row pays for another's JIT feedback, and heap readings start clean.
 *
 *     node --expose-gc --import tsx bench/suite.ts --row js [--quick] [--only random,gaps-txn]
 *     bun bench/suite.ts --row deque-map --quick
 *     deno run -A --v8-flags=--expose-gc bench/suite.ts --row wasm
 *
 * @module
 */
import process from "node:process";
import { existsSync } from "node:fs";
import { resolveEngine } from "../core/mod.ts";
import { cli, type RuntimeName, usageError } from "./cli.ts";
import { ROWS, type Row, subjectFactory } from "./rows.ts";
import { endScenario, kept, type Plan, type Result, SCENARIOS } from "./scenarios.ts";

interface Versions {
  runtime: RuntimeName;
  version: string;
}

function runtime(): Versions {
  const g = globalThis as unknown as { Bun?: { version: string }; Deno?: { version: { deno: string; v8: string } } };
  if (g.Bun) return { runtime: "bun", version: g.Bun.version };
  if (g.Deno) return { runtime: "deno", version: `${g.Deno.version.deno} (V8 ${g.Deno.version.v8})` };
  return { runtime: "node", version: `${process.versions.node} (V8 ${process.versions.v8})` };
}

let linearMemoryUsed: (() => number) | undefined;

/** Loads the WASM engine module if it is in the tree; returns why not when it cannot be used. */
async function wasmProblem(): Promise<string | null> {
  const url = new URL("../core/tracker/wasm_engine.ts", import.meta.url);
  try {
    if (existsSync(url)) {
      const mod = await import(url.href);
      if (typeof mod.wasmMemoryUsedBytes === "function") linearMemoryUsed = mod.wasmMemoryUsedBytes;
    }
    resolveEngine("wasm");
    return null;
  } catch (error) {
    return `skipped: WASM engine unavailable (${error instanceof Error ? error.message : String(error)})`;
  }
}

function fmtRate(r: number | null): string {
  if (r === null) return "—";
  return r >= 1e6 ? `${(r / 1e6).toFixed(r >= 1e8 ? 0 : 1)} M/s` : `${(r / 1e3).toFixed(0)} k/s`;
}

const o = cli(
  "suite",
  `usage: node --expose-gc --import tsx bench/suite.ts --row ROW [--quick] [--only SCENARIOS]
       (bun bench/suite.ts …, deno run -A --v8-flags=--expose-gc bench/suite.ts …)

Every scenario for one row on this runtime; one line per result plus @@row JSON lines
(what bench/run.mjs collects). Writes nothing.

  --row ROW            ${ROWS.join(", ")}
  --quick              reduced sizes
  --only LIST          comma-separated scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}
                       (steady-64 and codec belong to micro.ts and codec.bench.ts: accepted, run nothing here)
  -h, --help           this text`,
  { row: { type: "string" }, quick: { type: "boolean" }, only: { type: "string" } },
);
const row = o.row as Row;
if (!ROWS.includes(row)) usageError("suite", `--row must be one of ${ROWS.join(", ")}; got ${JSON.stringify(o.row)}`);
const quick = o.quick === true;
const only = o.only?.split(",");
// (steady-64 is bench/micro.ts's scenario and codec bench/codec.bench.ts's: run.mjs passes one --only to all)
const unknown = only?.find((s) => s !== "steady-64" && s !== "codec" && !SCENARIOS.some((sc) => sc.name === s));
if (unknown !== undefined) usageError("suite", `--only: unknown scenario ${JSON.stringify(unknown)}`);
const rt = runtime();
const mode = row === "wasm-batch" ? "batch" : "call";
const baseline = row !== "js" && row !== "wasm" && row !== "wasm-batch";
const plan: Plan = {
  quick,
  mode,
  reps: (n) => (quick ? (baseline ? 1 : 5) : n >= 5_000_000 ? (baseline ? 1 : 3) : baseline ? 3 : 5),
};
const unavailable = row.startsWith("wasm") ? await wasmProblem() : null;
plan.linearMemoryUsed = linearMemoryUsed;
console.log(`@@meta ${JSON.stringify({ ...rt, row, quick })}`);

// Memory first: a fresh process gives the cleanest heap readings (and WASM's memory used starts small).
const ordered = [...SCENARIOS.filter((s) => s.name.startsWith("memory")), ...SCENARIOS.filter((s) => !s.name.startsWith("memory"))];
for (const sc of ordered) {
  if (only && !only.includes(sc.name)) continue;
  console.log(`@@about ${JSON.stringify({ scenario: sc.name, about: sc.about })}`);
  for (const n of sc.sizes(quick)) {
    const skip = unavailable ?? (sc.skip?.(mode) ? `n/a: ${sc.skip(mode)}` : null);
    let result: Result;
    if (skip) {
      result = { ops_per_sec: null, bytes_per_pending: null, note: skip };
    } else {
      try {
        result = sc.run(kept(subjectFactory(row)), n, plan);
      } catch (error) {
        result = { ops_per_sec: null, bytes_per_pending: null, note: `ERROR: ${error instanceof Error ? error.message : error}` };
      } finally {
        endScenario();
      }
    }
    const out = { runtime: rt.runtime, engine: row, scenario: sc.name, n, ...result };
    const bytes = result.bytes_per_pending === null ? "" : `  ${result.bytes_per_pending.toFixed(3)} B/rec`;
    console.log(`${rt.runtime.padEnd(5)} ${row.padEnd(13)} ${sc.name.padEnd(16)} n=${n.toLocaleString("en-US").padEnd(11)} ${fmtRate(result.ops_per_sec).padStart(10)}${bytes}  ${result.note}`);
    console.log(`@@row ${JSON.stringify(out)}`);
  }
}
