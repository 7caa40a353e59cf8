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
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { intFlag, parseCli, usageError } from "../scripts/cli.mjs";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import type { RunnerState } from "./consumer.ts";
import { type DemoResult, type Strategy, type Trial, strategyResult, svg, table } from "./report.ts";
import { REBALANCE_OPTIONS } from "./rebalance_config.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const CONSUMER = join(HERE, "consumer.ts");

/** Settings of a demo run. */
export interface DemoOptions {
  /** Records per topic (default 1,000). */
  records?: number;
  /** Runs (default 1). */
  runs?: number;
  /** SIGKILL this long after the first record reached the consumer (default 1,000 ms). */
  killAfterMs?: number;
  /**
   * Count `killAfterMs` from the first record the consumer logged as finished instead
   * (default false): on a loaded machine a consumer can finish nothing within a short
   * `killAfterMs` of its first record's arrival, and a crash with nothing finished shows nothing.
   */
  killFromFirstFinished?: boolean;
  /** Workers per consumer (default 4). */
  workers?: number;
  /** Work per record (default 5 ms). */
  workMs?: number;
  /** Auto-commit period of the naive strategy (the frontier strategy uses the library's default commits). Default 100 ms. */
  commitMs?: number;
  /** Strategies to run (default both). */
  strategies?: readonly Strategy[];
  /** Run the strategies of a run one after the other instead of side by side (default false). */
  sequential?: boolean;
  /** Give up on a replacement after this long (default 60 s). */
  timeoutMs?: number;
  /** Keep the per-trial logs (their directory is printed). */
  keepLogs?: boolean;
  /** Progress lines. */
  progress?: (line: string) => void;
  /** Called after each run with the trials so far; return `false` to stop early. */
  afterRun?: (run: number, trials: Trial[]) => boolean | void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The children alive now, SIGKILLed if the harness exits first. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** The Node binary for the child processes (they always run on Node, via tsx). */
function nodeBin(): string {
  const g = globalThis as { Deno?: unknown };
  return process.versions.bun || g.Deno ? "node" : process.execPath;
}

interface Child {
  proc: ChildProcess;
  /** Resolves with the time of the first `event` line, rejects if the child exits or the timeout passes. */
  waitFor(event: string, timeoutMs: number): Promise<number>;
  /** Time of the first `event` line, if seen. */
  seen(event: string): number | undefined;
  /** Exit code/signal once exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the child printed on stderr and its error events. */
  errors(): string;
}

function spawnConsumer(args: string[]): Child {
  const proc = spawn(nodeBin(), ["--import", "tsx", CONSUMER, ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"], // stdin: the child exits when it closes (harness gone)
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: "1" },
  });
  children.add(proc);
  const seen = new Map<string, number>();
  const waiters = new Map<string, Array<(t: number) => void>>();
  let stderr = "";
  let buf = "";
  proc.stdout!.setEncoding("utf8");
  proc.stdout!.on("data", (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let msg: { event?: string; error?: string };
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (!msg.event) continue;
      if (msg.event === "error") stderr += `${msg.error}\n`;
      const t = performance.now();
      if (!seen.has(msg.event)) seen.set(msg.event, t);
      for (const w of waiters.get(msg.event) ?? []) w(t);
      waiters.delete(msg.event);
    }
  });
  proc.stderr!.setEncoding("utf8");
  proc.stderr!.on("data", (d: string) => (stderr = (stderr + d).slice(-8_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    proc.on("exit", (code, signal) => {
      children.delete(proc);
      res({ code, signal });
    });
  });
  return {
    proc,
    exited,
    seen: (event) => seen.get(event),
    errors: () => stderr.trim(),
    waitFor(event, timeoutMs) {
      const t = seen.get(event);
      if (t !== undefined) return Promise.resolve(t);
      return new Promise((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`no "${event}" from the consumer within ${timeoutMs} ms`)), timeoutMs);
        (waiters.get(event) ?? waiters.set(event, []).get(event)!).push((at) => (clearTimeout(timer), res(at)));
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          rej(new Error(`consumer exited (code ${code}, signal ${signal}) before "${event}":\n${stderr.trim()}`));
        });
      });
    },
  };
}

async function kill(child: Child): Promise<void> {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
  await child.exited;
}

/** Offsets in a finished log, in the order they were logged. */
function readLog(path: string): number[] {
  if (!existsSync(path)) return [];
  const out: number[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (/^\d+$/.test(line)) out.push(Number(line));
  }
  return out;
}

/** The last complete line of the frontier's state file. */
function lastState(path: string): RunnerState | undefined {
  if (!existsSync(path)) return undefined;
  const lines = readFileSync(path, "utf8").split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]) as RunnerState;
    } catch {
      // empty or torn last line
    }
  }
  return undefined;
}

async function committed(brokers: string, group: string, topic: string): Promise<number | null> {
  const c = (await committedOffsets(brokers, group, topic)).get(0);
  return c === undefined ? null : Number(c);
}

/**
 * createTopic, retried: right after a topic is created, KRaft's metadata can still
 * answer "does not host this topic-partition" to KafkaJS's leader check.
 */
async function ensureTopic(brokers: string, topic: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      return await createTopic(brokers, topic, 1);
    } catch (e) {
      if (attempt >= 10) throw e;
      await sleep(200);
    }
  }
}

interface TrialSettings {
  records: number;
  killAfterMs: number;
  killFromFirstFinished: boolean;
  workers: number;
  workMs: number;
  commitMs: number;
  timeoutMs: number;
}

/**
 * One crash-and-recover trial on a fresh one-partition topic holding offsets
 * 0 … records − 1: a consumer, SIGKILLed `killAfterMs` after its first record; a
 * replacement in the same group; the records counted from both finished logs.
 */
export async function runTrial(
  brokers: string,
  topic: string,
  strategy: Strategy,
  run: number,
  s: TrialSettings,
  dir: string,
): Promise<Trial> {
  const group = `${topic}-group`;
  const logA = join(dir, `${strategy}-a.log`);
  const logB = join(dir, `${strategy}-b.log`);
  const state = join(dir, `${strategy}-a.state`);
  const common = [
    "--strategy", strategy,
    "--brokers", brokers,
    "--topic", topic,
    "--group", group,
    "--workers", String(s.workers),
    "--work-ms", String(s.workMs),
    "--commit-ms", String(s.commitMs),
  ];

  // The first consumer: killed mid-work.
  const a = spawnConsumer([...common, "--log", logA, "--state", state]);
  let b: Child | undefined;
  try {
    let first = await a.waitFor("consuming", 60_000);
    if (s.killFromFirstFinished) {
      for (const until = performance.now() + 60_000; readLog(logA).length === 0 && performance.now() < until;) await sleep(5);
      first = performance.now();
    }
    await sleep(Math.max(0, s.killAfterMs - (performance.now() - first)));
    a.proc.kill("SIGKILL");
    const killedAt = performance.now();
    await a.exited;
    const committedAtCrash = await committed(brokers, group, topic);
    const finishedA = readLog(logA);
    const runnerState = strategy === "frontier" ? lastState(state) : undefined;

    // The replacement, same group. It gets the partition only once the killed member's
    // session expired (6 s); by then no commit of the killed process can still land.
    b = spawnConsumer([...common, "--log", logB, "--state", join(dir, `${strategy}-b.state`)]);
    await sleep(Math.max(0, 500 - (performance.now() - killedAt)));
    const resumedAt = await committed(brokers, group, topic);
    if (b.seen("joined") !== undefined) {
      throw new Error("the replacement joined before the committed offset settled; the trial cannot be counted");
    }
    const from = resumedAt ?? 0;
    const need = s.records - from;
    const deadline = performance.now() + s.timeoutMs;
    let finishedB: number[] = [];
    let timedOut = false;
    await b.waitFor("joined", s.timeoutMs);
    for (;;) {
      finishedB = readLog(logB);
      const covered = new Set(finishedB.filter((o) => o >= from)).size;
      if (covered >= need) break;
      if (performance.now() > deadline) {
        timedOut = true;
        break;
      }
      if (b.proc.exitCode !== null) throw new Error(`the replacement exited early:\n${b.errors()}`);
      await sleep(20);
    }
    const recoveryMs = Math.round(performance.now() - killedAt);
    await kill(b);

    const count = new Map<number, number>();
    for (const o of [...finishedA, ...finishedB]) count.set(o, (count.get(o) ?? 0) + 1);
    let lost = 0, duplicates = 0;
    for (let o = 0; o < s.records; o++) {
      const n = count.get(o) ?? 0;
      if (n === 0) lost++;
      else if (n > 1) duplicates++;
    }
    const trial: Trial = {
      strategy,
      run,
      records: s.records,
      finishedBeforeCrash: finishedA.length,
      highestFinished: finishedA.length ? Math.max(...finishedA) : -1,
      committedAtCrash,
      resumedAt,
      finishedByReplacement: finishedB.length,
      lost,
      duplicates,
      recoveryMs,
      timedOut,
    };
    if (runnerState) {
      // Before the first acknowledged commit the group had none: the partition started at 0.
      const safe = runnerState.safe ?? null;
      const confirmed = runnerState.confirmed ?? null;
      const finishedAfterConfirmed = (safe ?? 0) - (confirmed ?? 0) + runnerState.blocked;
      trial.runner = {
        running: runnerState.running,
        safe,
        confirmed,
        blocked: runnerState.blocked,
        finishedAfterConfirmed,
        bound: runnerState.running + finishedAfterConfirmed,
      };
    }
    return trial;
  } finally {
    await kill(a);
    if (b) await kill(b);
  }
}

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
  --commit-ms MS       commit period of both strategies (default 100)
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
