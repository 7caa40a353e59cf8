/**
 * One trial of the crash demo (demo/run.ts runs them): a consumer child process
 * (demo/consumer.ts) under a commit strategy, SIGKILLed after its first records, and a
 * replacement in the same group that runs until every record is accounted for; lost and
 * duplicated records counted from the two processes' fsynced finished logs.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { committedOffsets, createTopic } from "../test/broker/broker.ts";
import type { RunnerState } from "./consumer.ts";
import type { Strategy, Trial } from "./report.ts";

export const HERE = dirname(fileURLToPath(import.meta.url));
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
export async function ensureTopic(brokers: string, topic: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      return await createTopic(brokers, topic, 1);
    } catch (e) {
      if (attempt >= 10) throw e;
      await sleep(200);
    }
  }
}

export interface TrialSettings {
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
    // Every record from the resume position is accounted for once it is finished by the
    // replacement or, for the frontier, skipped by it because the victim's last commit
    // claimed it in the completed set; the frontier replacement is done once its commit
    // reaches the end (it redid everything unclaimed). Counting only the replacement's log
    // waited forever whenever that commit claimed a record.
    for (;;) {
      finishedB = readLog(logB);
      const accounted = strategy === "frontier" ? [...finishedA, ...finishedB] : finishedB;
      const covered = new Set(accounted.filter((o) => o >= from)).size;
      if (covered >= need && (strategy !== "frontier" || await committed(brokers, group, topic) === s.records)) break;
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
