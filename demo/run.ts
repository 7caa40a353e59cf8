/**
 * The crash demo: what each commit strategy loses when a consumer is SIGKILLed.
 *
 *   npm run demo [-- --runs K] [--json] [--records N] [--kill-after MS] [--sequential]
 *
 * `--scenario rebalance` runs the other scenario instead (demo/rebalance.ts): the
 * rebalance gap against a shared SQLite database, the sink's guard off and on.
 *
 * Options: `--only naive|frontier`, `--workers`, `--work-ms`, `--commit-ms`, `--out DIR`,
 * `--keep-logs`.
 *
 * Starts a local Kafka broker (test/broker/broker.ts; `KAFKA_BROKERS` is used instead
 * when set), and per run and strategy: a one-partition topic with `--records` records;
 * a consumer child process (demo/consumer.ts) with 4 workers × 5 ms per record; a
 * `SIGKILL` `--kill-after` ms after its first record arrived; a replacement in the same
 * group that runs until every record is accounted for. Lost and duplicated records are
 * counted exactly from the two processes' fsynced finished logs.
 *
 * Prints a table per strategy (or, with `--json`, only the figures as JSON; progress
 * goes to stderr) and writes `demo/results/latest.json` and `latest.svg`.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { intFlag, parseCli, usageError } from "../scripts/cli.mjs";
import { endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { type DemoResult, type Strategy, type Trial, strategyResult, svg, table } from "./report.ts";
import { REBALANCE_OPTIONS } from "./rebalance_config.ts";
import { type DemoOptions, ensureTopic, HERE, runTrial, type TrialSettings } from "./trial.ts";

/** Runs the demo against `brokers`; returns every trial by strategy. */
export async function runDemo(brokers: string, o: DemoOptions = {}): Promise<DemoResult> {
  const s: TrialSettings = {
    records: o.records ?? 1_000,
    killAfterMs: o.killAfterMs ?? 1_000,
    killFromFirstFinished: o.killFromFirstFinished ?? false,
    workers: o.workers ?? 4,
    workMs: o.workMs ?? 5,
    commitMs: o.commitMs ?? 100,
    timeoutMs: o.timeoutMs ?? 60_000,
  };
  const runs = o.runs ?? 1;
  const strategies = o.strategies ?? (["naive", "frontier"] as const);
  const progress = o.progress ?? (() => {});
  const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const root = mkdtempSync(join(tmpdir(), "offset-frontier-demo-"));
  const trials: Trial[] = [];
  const values = Array.from({ length: s.records }, (_, i) => ({ value: `record ${i}` }));
  try {
    for (let run = 1; run <= runs; run++) {
      const dir = join(root, `run-${run}`);
      mkdirSync(dir, { recursive: true });
      const one = async (strategy: Strategy): Promise<Trial> => {
        const topic = `demo-${stamp}-r${run}-${strategy}`;
        await ensureTopic(brokers, topic);
        await produce(brokers, topic, values);
        const end = Number((await endOffsets(brokers, topic)).get(0));
        if (end !== s.records) throw new Error(`topic ${topic} holds ${end} records, not ${s.records}`);
        const t = await runTrial(brokers, topic, strategy, run, s, dir);
        progress(
          `run ${run}/${runs} ${strategy.padEnd(8)} finished ${t.finishedBeforeCrash} by the kill (highest ${t.highestFinished}), ` +
            `committed ${t.committedAtCrash ?? "-"} → lost ${t.lost}, processed twice ${t.duplicates}` +
            (t.runner ? ` (runner bound ${t.runner.bound})` : "") + ` [recovered in ${(t.recoveryMs / 1000).toFixed(1)} s]`,
        );
        return t;
      };
      const done = o.sequential
        ? await strategies.reduce<Promise<Trial[]>>(async (acc, st) => [...(await acc), await one(st)], Promise.resolve([]))
        : await Promise.all(strategies.map(one));
      trials.push(...done);
      if (o.afterRun?.(run, trials) === false) break;
    }
  } finally {
    if (o.keepLogs) progress(`logs kept in ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  const runsDone = Math.max(0, ...trials.map((t) => t.run));
  return {
    runs: runsDone,
    settings: { records: s.records, killAfterMs: s.killAfterMs, workers: s.workers, workMs: s.workMs, commitMs: s.commitMs },
    naive: strategyResult(trials.filter((t) => t.strategy === "naive")),
    frontier: strategyResult(trials.filter((t) => t.strategy === "frontier")),
  };
}

/** The figures printed by `--json`: per strategy the per-run lists, plus summaries. */
export function figures(r: DemoResult): Record<string, unknown> {
  const pick = (x: DemoResult["naive"]) => ({
    lost: x.lost,
    duplicates: x.duplicates,
    committedAtCrash: x.committedAtCrash,
    highestFinished: x.highestFinished,
    summary: x.summary,
  });
  return {
    runs: r.runs,
    settings: r.settings,
    naive: pick(r.naive),
    frontier: { ...pick(r.frontier), bound: r.frontier.trials.map((t) => t.runner?.bound ?? null) },
  };
}

function strategyArg(v: string): Strategy {
  if (v !== "naive" && v !== "frontier") usageError("demo", `--only must be naive or frontier; got ${JSON.stringify(v)}`);
  return v;
}

const USAGE = `usage: npm run demo -- [options]      (node --import tsx demo/run.ts [options])

Two scenarios (--scenario crash|rebalance, default crash); each starts a local Kafka
broker (or uses KAFKA_BROKERS).

crash: SIGKILLs a consumer mid-work and counts the records each commit strategy lost or
processed twice. Writes demo/results/latest.json and latest.svg (git-ignored) unless
--out says otherwise.

  --runs K             runs (default 1)
  --records N          records per topic (default 1000)
  --kill-after MS      SIGKILL this long after the first record arrived (default 1000)
  --workers N          workers per consumer (default 4)
  --work-ms MS         work per record (default 5)
  --commit-ms MS       the naive strategy's auto-commit period (default 100); frontier
                       commits as the library does by default (eagerly), whatever this says
  --only STRATEGY      naive or frontier (default both)
  --sequential         run the strategies of a run one after the other
  --json               print only the figures, as JSON, on stdout
  --out DIR            where latest.json and latest.svg go (default demo/results)
  --keep-logs          keep the per-trial logs

rebalance: two members write each record's value to its key's row in one shared SQLite
file; a third member joins while slow handlers outlast the drain bound. Counts, with the
database's guard (version < offset) off and on, the old owners' writes that landed after
the new owners' (stale overwrites), rows without their key's last value, lost records.

${REBALANCE_OPTIONS}

  --scenario NAME      crash (default) or rebalance
  -h, --help           this text`;

/** The value of `--scenario` (before any `--`), and the arguments without it. */
function scenarioOf(argv: string[]): { scenario: string; rest: string[] } {
  const rest: string[] = [];
  let scenario = "crash";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === "--scenario") scenario = argv[++i] ?? "";
    else if (a.startsWith("--scenario=")) scenario = a.slice("--scenario=".length);
    else rest.push(a);
  }
  return { scenario, rest };
}

async function main(): Promise<void> {
  const { scenario, rest } = scenarioOf(process.argv.slice(2));
  // Loaded only when asked for: the crash scenario needs no database.
  if (scenario === "rebalance") return await (await import("./rebalance.ts")).rebalanceMain(rest);
  if (scenario !== "crash" && !rest.includes("--help") && !rest.includes("-h")) {
    usageError("demo", `--scenario must be crash or rebalance; got ${JSON.stringify(scenario)}`);
  }
  const { values } = parseCli({
    argv: rest,
    name: "demo",
    usage: USAGE,
    options: {
      runs: { type: "string", default: "1" },
      json: { type: "boolean", default: false },
      records: { type: "string", default: "1000" },
      "kill-after": { type: "string", default: "1000" },
      workers: { type: "string", default: "4" },
      "work-ms": { type: "string", default: "5" },
      "commit-ms": { type: "string", default: "100" },
      sequential: { type: "boolean", default: false },
      out: { type: "string", default: join(HERE, "results") },
      "keep-logs": { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  const int = (name: string, v: string | undefined, min: number): number => intFlag("demo", name, v, min);
  const opts: DemoOptions = {
    runs: int("runs", values.runs, 1),
    records: int("records", values.records, 1),
    killAfterMs: int("kill-after", values["kill-after"], 0),
    workers: int("workers", values.workers, 1),
    workMs: int("work-ms", values["work-ms"], 0),
    commitMs: int("commit-ms", values["commit-ms"], 1),
    sequential: values.sequential,
    ...(values.only ? { strategies: [strategyArg(values.only)] } : {}),
    keepLogs: values["keep-logs"],
    progress: (line) => console.error(line),
  };
  const t0 = performance.now();
  if (!process.env.KAFKA_BROKERS) console.error("starting a local Kafka broker (first start resolves Kafka with Maven) …");
  const result = await withBroker(async (brokers) => {
    console.error(`broker ${brokers}`);
    return await runDemo(brokers, opts);
  });
  const out = resolve(values.out!);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "latest.json"), JSON.stringify(result, null, 2) + "\n");
  writeFileSync(join(out, "latest.svg"), svg(result));
  console.error(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s; wrote ${join(out, "latest.json")} and latest.svg`);
  if (values.json) process.stdout.write(JSON.stringify(figures(result)) + "\n");
  else console.log(table(result));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => process.exit(130)); // runs the exit hooks
  main().catch((e) => {
    console.error(e instanceof Error ? e.stack ?? e.message : e);
    process.exit(1);
  });
}
