/**
 * The rebalance scenario of the demo: the gap a bounded drain cannot close, shown against
 * a real database, with the sink's guard off and on.
 *
 *   npm run demo -- --scenario rebalance [--runs K] [--json] [--runtime node|bun|deno] …
 *
 * Per run and mode (unguarded, then guarded), on a fresh topic of `partitions` partitions
 * and a fresh SQLite file shared by the members (demo/rebalance_db.ts):
 * 1. one record per key (`keys` keys, key i on partition i mod `partitions`); two members
 *    `a` and `b` (demo/rebalance_member.ts) join one group and write every record's value
 *    to its key's row;
 * 2. one trap record per partition (on the partition's first key): its handler, in `a` or
 *    `b`, is a slow call that returns `lateMs` after the partition was taken away;
 * 3. once every trap is running: a newer record for every key; then a third member `c`
 *    joins, so the group rebalances: each old owner drains for `drainMs`, gives up on the
 *    trap, commits below it; the new owners redo the trap and write the newer record;
 *    then the old owners' trap writes land.
 * The run ends when every produced record was written at least once and every trap's late
 * write landed; the members are stopped with SIGTERM and the database is counted
 * (demo/rebalance_count.ts): stale overwrites, late writes, wrong final rows, lost records.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { intFlag, parseCli, usageError } from "../scripts/cli.mjs";
import { createTopic, produce, withBroker } from "../test/broker/broker.ts";
import { countGap, type GapCounts, type Produced } from "./rebalance_count.ts";
import { SharedDb } from "./rebalance_db.ts";
import { type MemberConfig, REBALANCE_OPTIONS, TRAP } from "./rebalance_config.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

/** A runtime the members can run on. */
export type MemberRuntime = "node" | "bun" | "deno";

/** Settings of the rebalance scenario. */
export interface RebalanceOptions {
  /** Runs (default 1); each runs both modes. */
  runs?: number;
  /** Runtime of the member processes (default node). */
  runtime?: MemberRuntime;
  /** Partitions of the topic (default 6). */
  partitions?: number;
  /** Keys (default 300). */
  keys?: number;
  /** The revoke's drain bound of every member (default 1,000 ms). */
  drainMs?: number;
  /** A trap's write lands this long after its partition was taken away (default 3,000 ms). */
  lateMs?: number;
  /** Work per ordinary record (default 2 ms). */
  workMs?: number;
  /** Modes to run (default both, unguarded first). */
  modes?: readonly Mode[];
  /** Give up on a phase after this long (default 60 s). */
  timeoutMs?: number;
  /** Keep the per-run files (their directory is printed). */
  keepLogs?: boolean;
  /** Progress lines. */
  progress?: (line: string) => void;
}

/** Guard off or on. */
export type Mode = "unguarded" | "guarded";

/** The counts of every run, per mode. */
export interface RebalanceResult {
  runs: number;
  runtime: MemberRuntime;
  unguarded: GapCounts[];
  guarded: GapCounts[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The children alive now, SIGKILLed if the harness exits first. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** How to run demo/rebalance_member.ts on a runtime. */
function memberCommand(rt: MemberRuntime): [string, string[]] {
  const path = join(HERE, "rebalance_member.ts");
  const bin = (name: string): string => join(ROOT, "node_modules", ".bin", name);
  if (rt === "bun") return [bin("bun"), [path]];
  if (rt === "deno") return [bin("deno"), ["run", "--allow-all", path]];
  const g = globalThis as { Deno?: unknown };
  return [process.versions.bun || g.Deno ? "node" : process.execPath, ["--import", "tsx", path]];
}

interface Member {
  name: string;
  proc: ChildProcess;
  /** Events seen so far, by name. */
  count(event: string): number;
  /** Partitions of the member's latest group join (0 before the first). */
  partitions(): number;
  exited: Promise<void>;
  /** Stderr tail and `error` events. */
  errors(): string;
}

function spawnMember(rt: MemberRuntime, cfg: MemberConfig): Member {
  const [cmd, args] = memberCommand(rt);
  const proc = spawn(cmd, [...args, JSON.stringify(cfg)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"], // stdin: commands; the member exits when it closes
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: "1" },
  });
  children.add(proc);
  const counts = new Map<string, number>();
  let errors = "";
  let partitions = 0;
  let buf = "";
  proc.stdout!.setEncoding("utf8");
  proc.stdout!.on("data", (d: string) => {
    buf += d;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let msg: { event?: string; error?: string; partitions?: number[] };
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (!msg.event) continue;
      counts.set(msg.event, (counts.get(msg.event) ?? 0) + 1);
      if (msg.event === "error") errors = (errors + `${msg.error}\n`).slice(-8_000);
      if (msg.event === "joined") partitions = msg.partitions?.length ?? 0;
    }
  });
  proc.stderr!.setEncoding("utf8");
  proc.stderr!.on("data", (d: string) => (errors = (errors + d).slice(-8_000)));
  proc.stdin!.on("error", () => {}); // the member may be gone already
  const exited = new Promise<void>((res) => proc.on("exit", () => (children.delete(proc), res())));
  return {
    name: cfg.member,
    proc,
    exited,
    count: (e) => counts.get(e) ?? 0,
    partitions: () => partitions,
    errors: () => errors.trim(),
  };
}

/** Waits until `ok()` holds, polling; throws `what` (with the members' errors) after `timeoutMs`. */
async function until(what: string, timeoutMs: number, members: Member[], ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await ok())) {
    const dead = members.find((m) => m.proc.exitCode !== null || m.proc.signalCode !== null);
    if (dead) throw new Error(`member ${dead.name} exited while waiting for ${what}:\n${dead.errors()}`);
    if (performance.now() > deadline) {
      throw new Error(`no ${what} within ${timeoutMs} ms:\n${members.map((m) => `${m.name}: ${m.errors()}`).join("\n")}`);
    }
    await sleep(100);
  }
}

/** SIGTERM (graceful shutdown), then SIGKILL after `graceMs`. */
async function stop(m: Member, graceMs: number): Promise<void> {
  if (m.proc.exitCode !== null || m.proc.signalCode !== null) return;
  // By pid: under Deno, ChildProcess.kill() does nothing after its first call.
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(m.proc.pid!, sig);
    } catch {
      // exited meanwhile
    }
  };
  signal("SIGTERM");
  const t = setTimeout(() => signal("SIGKILL"), graceMs);
  await m.exited;
  clearTimeout(t);
}

interface TrialSettings {
  runtime: MemberRuntime;
  partitions: number;
  keys: number;
  drainMs: number;
  lateMs: number;
  workMs: number;
  timeoutMs: number;
}

/** One run of one mode on a fresh topic and database; returns its counts. */
export async function runGapTrial(brokers: string, topic: string, mode: Mode, s: TrialSettings, dir: string): Promise<GapCounts> {
  for (let attempt = 1;; attempt++) {
    try {
      await createTopic(brokers, topic, s.partitions);
      break;
    } catch (e) {
      if (attempt >= 10) throw e;
      await sleep(200);
    }
  }
  const dbPath = join(dir, `${mode}.db`);
  const db = await SharedDb.open(dbPath);
  await db.init();
  const key = (i: number): string => `k${String(i).padStart(3, "0")}`;
  const produced: Produced[] = [];
  const send = async (records: Array<{ i: number; value: string }>): Promise<void> => {
    await produce(brokers, topic, records.map(({ i, value }) => ({ key: key(i), value, partition: i % s.partitions })));
    for (const { i, value } of records) produced.push({ key: key(i), value });
  };
  const allKeys = Array.from({ length: s.keys }, (_, i) => i);
  const written = async (): Promise<boolean> => {
    const values = await db.writtenValues();
    return produced.every((p) => values.has(p.value));
  };
  const config = (member: string, slowTraps: boolean): MemberConfig => ({
    member,
    brokers,
    topic,
    group: `${topic}-group`,
    db: dbPath,
    guarded: mode === "guarded",
    slowTraps,
    drainMs: s.drainMs,
    workMs: s.workMs,
    lateMs: s.lateMs,
    concurrency: 16,
  });
  const members: Member[] = [];
  try {
    // 1. two members, one record per key
    await send(allKeys.map((i) => ({ i, value: `${key(i)}#0` })));
    members.push(spawnMember(s.runtime, config("a", true)), spawnMember(s.runtime, config("b", true)));
    // … and the group settled: both joined, their latest assignments share out every partition
    const settled = (): boolean => members.every((m) => m.count("joined") > 0) &&
      members.reduce((n, m) => n + m.partitions(), 0) === s.partitions;
    await until("first records written by a settled group", s.timeoutMs, members, async () => settled() && await written());
    // 2. a trap per partition, running slow in a or b
    const traps = Array.from({ length: s.partitions }, (_, p) => p);
    await send(traps.map((i) => ({ i, value: `${key(i)}#1${TRAP}` })));
    const trapsRunning = (): number => members.reduce((n, m) => n + m.count("trap-start"), 0);
    await until("trap records running", s.timeoutMs, members, () => trapsRunning() >= traps.length);
    // 3. newer records for every key, then a third member joins: the partitions move
    await send(allKeys.map((i) => ({ i, value: `${key(i)}#2` })));
    for (const m of members) m.proc.stdin!.write("fast\n"); // a trap redone from now on is quick
    members.push(spawnMember(s.runtime, config("c", false)));
    const trapsLanded = (): number => members.reduce((n, m) => n + m.count("trap-end"), 0);
    await until("late trap writes and every record written", s.timeoutMs, members, async () =>
      trapsLanded() >= trapsRunning() && await written());
  } finally {
    await Promise.all(members.map((m) => stop(m, 15_000)));
    // Every member is gone: a lock directory left now is a SIGKILLed member's, never freed.
    rmSync(`${dbPath}.lock`, { recursive: true, force: true });
  }
  const counts = countGap(await db.writes(), await db.rows(), produced);
  db.close();
  return counts;
}

/** Runs the scenario against `brokers`. */
export async function runRebalanceDemo(brokers: string, o: RebalanceOptions = {}): Promise<RebalanceResult> {
  const s: TrialSettings = {
    runtime: o.runtime ?? "node",
    partitions: o.partitions ?? 6,
    keys: o.keys ?? 300,
    drainMs: o.drainMs ?? 1_000,
    lateMs: o.lateMs ?? 3_000,
    workMs: o.workMs ?? 2,
    timeoutMs: o.timeoutMs ?? 60_000,
  };
  if (s.keys < s.partitions) throw new Error(`keys (${s.keys}) must be at least partitions (${s.partitions})`);
  const runs = o.runs ?? 1;
  const modes = o.modes ?? (["unguarded", "guarded"] as const);
  const progress = o.progress ?? (() => {});
  const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const root = mkdtempSync(join(tmpdir(), "offset-frontier-gap-"));
  const result: RebalanceResult = { runs: 0, runtime: s.runtime, unguarded: [], guarded: [] };
  try {
    for (let run = 1; run <= runs; run++) {
      for (const mode of modes) {
        const dir = mkdtempSync(join(root, `run-${run}-${mode}-`));
        const t0 = performance.now();
        const c = await runGapTrial(brokers, `gap-${stamp}-r${run}-${mode}`, mode, s, dir);
        result[mode].push(c);
        progress(
          `run ${run}/${runs} ${mode.padEnd(9)} (${s.runtime}): stale overwrites ${c.staleOverwrites}, late writes ${c.lateWrites}, ` +
            `wrong final rows ${c.wrongFinalRows}, lost ${c.lost} (${c.writes} writes) [${((performance.now() - t0) / 1000).toFixed(1)} s]`,
        );
      }
      result.runs = run;
    }
  } finally {
    if (o.keepLogs) progress(`files kept in ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  return result;
}

/** The figures printed by `--json`: per mode the per-run lists. */
export function rebalanceFigures(r: RebalanceResult): Record<string, unknown> {
  const pick = (xs: GapCounts[]) => ({
    staleOverwrites: xs.map((x) => x.staleOverwrites),
    wrongFinalRows: xs.map((x) => x.wrongFinalRows),
    lost: xs.map((x) => x.lost),
  });
  return { runs: r.runs, unguarded: pick(r.unguarded), guarded: pick(r.guarded) };
}

const USAGE = `usage: npm run demo -- --scenario rebalance [options]

The rebalance gap: two members write each record's value to its key's row in one shared
SQLite file; a third member joins while slow handlers outlast the drain bound. Counts,
with the database's guard off and on, the old owners' writes that landed after the new
owners' (stale overwrites), rows left without their key's last value, and lost records.

${REBALANCE_OPTIONS}
  -h, --help           this text`;

/** `npm run demo -- --scenario rebalance …` (argv without `--scenario rebalance`). */
export async function rebalanceMain(argv: string[]): Promise<void> {
  const { values } = parseCli({
    name: "demo",
    usage: USAGE,
    argv,
    options: {
      runs: { type: "string", default: "1" },
      runtime: { type: "string", default: "node" },
      partitions: { type: "string", default: "6" },
      keys: { type: "string", default: "300" },
      "drain-ms": { type: "string", default: "1000" },
      "late-ms": { type: "string", default: "3000" },
      "work-ms": { type: "string", default: "2" },
      only: { type: "string" },
      json: { type: "boolean", default: false },
      "keep-logs": { type: "boolean", default: false },
    },
  });
  const runtime = values.runtime;
  if (runtime !== "node" && runtime !== "bun" && runtime !== "deno") {
    usageError("demo", `--runtime must be node, bun or deno; got ${JSON.stringify(runtime)}`);
  }
  const only = values.only;
  if (only !== undefined && only !== "unguarded" && only !== "guarded") {
    usageError("demo", `--only must be unguarded or guarded; got ${JSON.stringify(only)}`);
  }
  const int = (name: string, v: string | undefined, min: number): number => intFlag("demo", name, v, min);
  const partitions = int("partitions", values.partitions, 1);
  const keys = int("keys", values.keys, 1);
  if (keys < partitions) usageError("demo", `--keys must be at least --partitions (${partitions}); got ${keys}`);
  const opts: RebalanceOptions = {
    runs: int("runs", values.runs, 1),
    runtime,
    partitions,
    keys,
    drainMs: int("drain-ms", values["drain-ms"], 0),
    lateMs: int("late-ms", values["late-ms"], 0),
    workMs: int("work-ms", values["work-ms"], 0),
    ...(only ? { modes: [only] } : {}),
    keepLogs: values["keep-logs"],
    progress: (line) => console.error(line),
  };
  const t0 = performance.now();
  if (!process.env.KAFKA_BROKERS) console.error("starting a local Kafka broker (first start resolves Kafka with Maven) …");
  const result = await withBroker(async (brokers) => {
    console.error(`broker ${brokers}`);
    return await runRebalanceDemo(brokers, opts);
  });
  console.error(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  if (values.json) process.stdout.write(JSON.stringify(rebalanceFigures(result)) + "\n");
  else console.log(rebalanceTable(result));
}

/** A plain-text table of the result. */
export function rebalanceTable(r: RebalanceResult): string {
  const lines = [`rebalance gap, ${r.runs} run(s), members on ${r.runtime}`, ""];
  lines.push("mode        stale overwrites   late writes   wrong final rows   lost");
  for (const mode of ["unguarded", "guarded"] as const) {
    for (const [i, c] of r[mode].entries()) {
      lines.push(
        `${(i === 0 ? mode : "").padEnd(12)}${String(c.staleOverwrites).padStart(16)}${String(c.lateWrites).padStart(14)}` +
          `${String(c.wrongFinalRows).padStart(19)}${String(c.lost).padStart(7)}`,
      );
    }
  }
  lines.push(
    "",
    "stale overwrite: an old owner's write that landed after the new owner's write of the same key;",
    "late write: such a write attempt, landed or refused by the guard (version < offset).",
  );
  return lines.join("\n");
}
