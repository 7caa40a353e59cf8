/**
 * The results file of `npm run bench:pc` (bench/pc/run.ts): what bench/results/pc.json holds,
 * and how it is written and rendered (JSON, chart, table and checks).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Check, type Row, svg, table } from "./report.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What bench/results/pc.json holds (the fields the renderer reads). */
export interface Results {
  date: string;
  quick: boolean;
  rounds: number;
  minutes: number;
  machine: { cpus: number; model: string | null; loadAverage: { before: number[]; after: number[] } };
  versions: Record<string, string | null>;
  settings: { example: { records: number }; noop: { records: number; partitions: number } };
  rows: Row[];
  checks: Check[];
}

/** Write `<base>.json` and `<base>.svg` into bench/results/ and print the table and the checks. */
export function writeResults(out: Results, writeJson = true): void {
  const dir = join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const base = out.quick ? "quick.pc" : "pc";
  if (writeJson) writeFileSync(join(dir, `${base}.json`), JSON.stringify(out, null, 2) + "\n");
  const { machine, versions } = out;
  const { before, after } = machine.loadAverage;
  const header = `Parallel Consumer ${versions.parallelConsumer ?? "?"} vs offset-frontier ${versions.offsetFrontier?.split(" ")[0] ?? "?"}${out.quick ? " (quick run)" : ""}, ${out.rounds} round(s), one broker`;
  const sub = `${machine.cpus} × ${machine.model}; Java ${versions.java}, kafka-clients ${versions.kafkaClients}; Node ${versions.node}, KafkaJS ${versions.kafkajs}; ${versions.broker}; load ${before[0]} → ${after[0]}; ${out.date.slice(0, 10)}`;
  const sizes = { example: out.settings.example.records, noop: out.settings.noop.records, noopPartitions: out.settings.noop.partitions };
  writeFileSync(join(dir, `${base}.svg`), svg(out.rows, header, sub, sizes));
  console.log(`\n${header}\n${sub}\n`);
  console.log(table(out.rows));
  console.log("");
  for (const c of out.checks) console.log(`${c.pass === null ? "SKIP" : c.informational ? "info" : c.pass ? "PASS" : "FAIL"}  ${c.text}`);
  console.log(`\nload average (1/5/15 min) ${before.join(" ")} → ${after.join(" ")} on ${machine.cpus} cores; ${out.minutes} min`);
  console.log(`wrote bench/results/${base}${writeJson ? ".json and" : ".svg (from"} bench/results/${base}.${writeJson ? "svg" : "json)"}`);
}
