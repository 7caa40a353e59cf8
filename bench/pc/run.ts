/**
 * `npm run bench:pc`: Confluent's Parallel Consumer and our runner side by side on ONE real
 * broker (test/broker/broker.ts; `KAFKA_BROKERS` uses an existing one), round by round,
 * alternating sides (PC, ours, PC, ours, …), each measured run in a fresh process
 * (bench/pc/PcBench.java on Java, bench/pc/ours.ts on Node).
 *
 * 1. PC's published example: 10,000 records (1,000 keys), uniform random 0–5 ms of work,
 *    concurrency 100, ONE partition, orderings unordered, key, partition. Figures: first
 *    record started → last record finished, and first record started → the group's committed
 *    offset equals the end offset (this process polls it with a KafkaJS admin every 50 ms).
 * 2. No-op handler, 300,000 keyed records (10,000 keys) on 3 partitions, unordered and key:
 *    records/s from the first record to the last; plus a plain Java KafkaConsumer loop and
 *    plain KafkaJS eachBatch on the same topic (no commits) as the clients' floors. Each
 *    process reads the topic twice, in two groups one after the other: "cold" (a fresh
 *    process: JIT warm-up inside the window, which weighs more on a 1-second run than on a
 *    10-second one) and "warm" (the second pass).
 *
 * Both sides run with their defaults except what a scenario names (ordering; concurrency 100
 * in the example): ours commits every 1,000 ms, PC every 5,000 ms
 * (ParallelConsumerOptions.DEFAULT_COMMIT_INTERVAL; the Java side reports it), both 16
 * concurrent records by default. Writes bench/results/pc.json and bench/results/pc.svg
 * (`--quick`: quick.pc.json / quick.pc.svg, git-ignored) and prints a table.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { createTopic, endOffsets, produce, withBroker } from "../../test/broker/broker.ts";
import { parseArgs } from "./args.ts";
import { buildJavaSide, type JavaSide } from "./build.ts";
import { checks, type Row, type Side, summarize } from "./report.ts";
import { type Results, writeResults } from "./results.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

const { rounds: ROUNDS, quick: QUICK, report: REPORT } = parseArgs(process.argv.slice(2));
if (REPORT !== undefined) {
  // Re-render the table, checks and chart of an earlier run (the checks are recomputed).
  const old = JSON.parse(readFileSync(resolve(REPORT), "utf8")) as Results;
  writeResults({ ...old, checks: checks(old.rows) }, false);
  process.exit(0);
}
const EXAMPLE = { records: QUICK ? 2_000 : 10_000, keys: 1_000, concurrency: 100, workMs: 5 };
const NOOP = { records: QUICK ? 30_000 : 300_000, keys: 10_000, partitions: 3, passes: 2 };
const ORDERINGS = ["unordered", "key", "partition"] as const;
const NOOP_ORDERINGS = ["unordered", "key"] as const;
const RUN_TIMEOUT_MS = 300_000;
const COMMIT_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

const log = (s: string): void => console.error(s);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const epochMs = (): number => performance.timeOrigin + performance.now();
const load = (): number[] => os.loadavg().map((x) => +x.toFixed(2));
let groupSeq = 0;
const RUN_ID = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
const group = (name: string): string => `bench-pc-${name}-${RUN_ID}-${groupSeq++}`;

/** What one measured run reports. */
interface Outcome {
  /** First record started → last finished (the process's monotonic clock). */
  seconds: number;
  firstEpochMs: number;
  lastEpochMs: number;
  /** First record started → committed offsets = end offsets (null: not watched). */
  committedSeconds: number | null;
  count: number;
  /** Records delivered together with the first one (1 where a handler runs per record). */
  firstBatch: number;
  /** CPU seconds the whole process used over the same window. */
  cpuSeconds: number;
}

interface Event {
  event: string;
  [k: string]: unknown;
}

/** Polls the group's committed offsets every 50 ms; resolves at the first poll where every partition reached its end. */
function watchCommitted(admin: Admin, groupId: string, topic: string, ends: Map<number, string>, stop: { stopped: boolean }): Promise<number | null> {
  return (async () => {
    while (!stop.stopped) {
      const t0 = performance.now();
      try {
        const res = await admin.fetchOffsets({ groupId, topics: [topic] });
        const at = epochMs();
        const parts = res[0]?.partitions ?? [];
        const reached = [...ends].every(([p, end]) => parts.find((x) => x.partition === p)?.offset === end);
        if (reached) return at;
      } catch {
        // the group may not exist yet: poll again
      }
      await sleep(Math.max(0, POLL_MS - (performance.now() - t0)));
    }
    return null;
  })();
}

/**
 * Run one child (Java or Node side) to its `done` event; when `commit` is given, wait until
 * the committed offsets reach the end; then ask it to close and wait for its exit.
 */
async function measure(
  what: string,
  cmd: string,
  args: string[],
  passes: number,
  commit: { admin: Admin; groupId: string; topic: string; ends: Map<number, string> } | null,
): Promise<Outcome[]> {
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-20_000);
  });
  const events: Event[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      events.push(JSON.parse(line) as Event);
    } catch {
      stderr += `\n[stdout] ${line}`;
    }
    waiters.splice(0).forEach((w) => w());
  });
  let exited: { code: number | null; signal: string | null } | null = null;
  const exit = new Promise<void>((r) =>
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      waiters.splice(0).forEach((w) => w());
      r();
    })
  );
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  const waitEvent = async (name: string, pass?: number): Promise<Event> => {
    for (;;) {
      const e = events.find((x) => x.event === name && (pass === undefined || x.pass === pass));
      if (e) return e;
      if (exited) throw new Error(`${what}: exited (${JSON.stringify(exited)}) before "${name}"\n${stderr.slice(-4000)}`);
      if (Date.now() > deadline) throw new Error(`${what}: no "${name}" within ${RUN_TIMEOUT_MS} ms\n${stderr.slice(-4000)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 1_000);
      });
    }
  };
  const stop = { stopped: false };
  const committed = commit ? watchCommitted(commit.admin, commit.groupId, commit.topic, commit.ends, stop) : Promise.resolve(null);
  try {
    const ready = await waitEvent("ready");
    runVersions[cmd === process.execPath ? "node" : "java"] = ready;
    const dones: Event[] = [];
    for (let p = 1; p <= passes; p++) dones.push(await waitEvent("done", p));
    let committedAt: number | null = null;
    if (commit) {
      committedAt = await Promise.race([committed, sleep(COMMIT_TIMEOUT_MS).then(() => null)]);
      if (committedAt === null) log(`  ${what}: committed offsets did not reach the end within ${COMMIT_TIMEOUT_MS} ms`);
    }
    child.stdin.end("close\n");
    await waitEvent("closed");
    await exit;
    return dones.map((done, i) => {
      const first = Number(done.firstEpochMs);
      return {
        seconds: Number(done.seconds),
        firstEpochMs: first,
        lastEpochMs: Number(done.lastEpochMs),
        // the commit watch follows pass 1's group
        committedSeconds: committedAt === null || i > 0 ? null : (committedAt - first) / 1000,
        count: Number(done.count),
        firstBatch: Number(done.firstBatch),
        cpuSeconds: Number(done.cpuSeconds),
      };
    });
  } finally {
    stop.stopped = true;
    if (!exited) child.kill("SIGKILL");
  }
}

/** The `ready` events of each side (versions, PC's defaults), the last seen. */
const runVersions: Record<Side, Event | undefined> = { java: undefined, node: undefined };

function javaArgs(j: JavaSide, side: "pc" | "plain", brokers: string, topic: string, groupId: string, n: number, ordering: string, conc: number, workMs: number, passes: number): string[] {
  return [
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-cp",
    j.classpath,
    "offsetfrontier.bench.PcBench",
    side,
    brokers,
    topic,
    groupId,
    String(n),
    ordering,
    String(conc),
    String(workMs),
    String(passes),
  ];
}

function nodeArgs(side: "ours" | "plain", brokers: string, topic: string, groupId: string, n: number, ordering: string, conc: number, workMs: number, passes: number): string[] {
  return ["--import", "tsx", join(HERE, "ours.ts"), side, brokers, topic, groupId, String(n), ordering, String(conc), String(workMs), String(passes)];
}

function git(...args: string[]): string | null {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

const t0 = Date.now();
const loadBefore = load();
log(`bench:pc: ${ROUNDS} round(s)${QUICK ? " (quick)" : ""}; load average ${loadBefore.join(" ")} on ${os.cpus().length} cores`);
const javaSide = await buildJavaSide(log);

const rows: Row[] = [];
const rowOf = (id: string, make: () => Row): Row => {
  let r = rows.find((x) => x.id === id);
  if (!r) rows.push((r = make()));
  return r;
};
const roundLoad: Array<{ round: number; before: number[]; after: number[] }> = [];

await withBroker(async (brokers) => {
  const admin = new Kafka({ clientId: "bench-pc-driver", brokers: brokers.split(","), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const exampleTopic = `bench-pc-example-${RUN_ID}`;
    await createTopic(brokers, exampleTopic, 1);
    await produce(brokers, exampleTopic, Array.from({ length: EXAMPLE.records }, (_, i) => ({ key: `k${i % EXAMPLE.keys}`, value: `${i}` })));
    const exampleEnds = await endOffsets(brokers, exampleTopic);

    const noopTopic = `bench-pc-noop-${RUN_ID}`;
    await createTopic(brokers, noopTopic, NOOP.partitions);
    const payload = "x".repeat(64);
    for (let i = 0; i < NOOP.records; i += 50_000) {
      const n = Math.min(50_000, NOOP.records - i);
      await produce(brokers, noopTopic, Array.from({ length: n }, (_, j) => ({ key: `k${(i + j) % NOOP.keys}`, value: `${i + j}:${payload}` })));
    }
    const noopEnds = await endOffsets(brokers, noopTopic);
    log(`bench:pc: topics ready (example ${[...exampleEnds.values()].join("/")}, no-op ${[...noopEnds.values()].join("/")} records)`);

    for (let round = 1; round <= ROUNDS; round++) {
      const before = load();
      const tr = Date.now();
      // 1. PC's example, each ordering: PC then ours
      for (const o of ORDERINGS) {
        const last = rowOf(`example-${o}-last`, () => ({ id: `example-${o}-last`, group: "example", label: `${o}: first → last`, unit: "s", names: { java: "PC", node: "ours" }, runs: { java: [], node: [] } }));
        const com = rowOf(`example-${o}-committed`, () => ({ id: `example-${o}-committed`, group: "example", label: `${o}: first → committed`, unit: "s", names: { java: "PC", node: "ours" }, runs: { java: [], node: [] } }));
        for (const side of ["java", "node"] as const) {
          const g = group(`example-${o}-${side}`);
          const what = `round ${round} example ${o} ${side === "java" ? "PC" : "ours"}`;
          try {
            const args = side === "java"
              ? javaArgs(javaSide, "pc", brokers, exampleTopic, g, EXAMPLE.records, o, EXAMPLE.concurrency, EXAMPLE.workMs, 1)
              : nodeArgs("ours", brokers, exampleTopic, g, EXAMPLE.records, o, EXAMPLE.concurrency, EXAMPLE.workMs, 1);
            const [r] = await measure(what, side === "java" ? javaSide.java : process.execPath, args, 1, { admin, groupId: `${g}-p1`, topic: exampleTopic, ends: exampleEnds });
            last.runs[side].push(r.seconds);
            com.runs[side].push(r.committedSeconds);
            log(`  ${what}: ${r.seconds.toFixed(3)} s first → last, ${r.committedSeconds?.toFixed(3) ?? "—"} s first → committed`);
          } catch (e) {
            last.runs[side].push(null);
            com.runs[side].push(null);
            log(`  ${what}: FAILED ${e instanceof Error ? e.message : e}`);
          }
        }
      }
      // 2. no-op throughput, two passes per process (cold, then JIT-warm): PC then ours per
      // ordering, then the plain clients
      type ArgsOf = (groupId: string) => string[];
      const P = NOOP.passes;
      const noopRuns: Array<{ id: string; label: string; names: Record<Side, string>; java: ArgsOf; node: ArgsOf }> = [
        ...NOOP_ORDERINGS.map((o) => ({
          id: `noop-${o}`,
          label: o,
          names: { java: "PC", node: "ours" },
          java: (g: string) => javaArgs(javaSide, "pc", brokers, noopTopic, g, NOOP.records, o, 0, 0, P),
          node: (g: string) => nodeArgs("ours", brokers, noopTopic, g, NOOP.records, o, 0, 0, P),
        })),
        {
          id: "noop-plain",
          label: "plain client, no commits",
          names: { java: "plain Java", node: "plain KafkaJS" },
          java: (g: string) => javaArgs(javaSide, "plain", brokers, noopTopic, g, NOOP.records, "none", 0, 0, P),
          node: (g: string) => nodeArgs("plain", brokers, noopTopic, g, NOOP.records, "none", 0, 0, P),
        },
      ];
      const passName = (p: number): string => (p === 1 ? "cold" : p === 2 ? "warm" : `warm ${p}`);
      for (const spec of noopRuns) {
        const rowFor = (i: number, cpuRow: boolean): Row => {
          const id = `${spec.id}-${passName(i + 1).replace(" ", "")}${cpuRow ? "-cpu" : ""}`;
          return rowOf(id, () => ({
            id,
            group: cpuRow ? "noop-cpu" : "noop",
            label: `${spec.label}, ${passName(i + 1)}`,
            unit: cpuRow ? "rec/CPU-s" : "rec/s",
            names: spec.names,
            runs: { java: [], node: [] },
          }));
        };
        const byPass = Array.from({ length: P }, (_, i) => rowFor(i, false));
        const byPassCpu = Array.from({ length: P }, (_, i) => rowFor(i, true));
        for (const side of ["java", "node"] as const) {
          const args = spec[side](group(`${spec.id}-${side}`));
          const what = `round ${round} no-op ${spec.label} ${spec.names[side]}`;
          try {
            const rs = await measure(what, side === "java" ? javaSide.java : process.execPath, args, P, null);
            const text = rs.map((r, i) => {
              // The records that came with the first delivery took no time inside the window.
              const rate = (NOOP.records - r.firstBatch) / r.seconds;
              const perCpu = (NOOP.records - r.firstBatch) / r.cpuSeconds;
              byPass[i].runs[side].push(rate);
              byPassCpu[i].runs[side].push(perCpu);
              return `${passName(i + 1)} ${Math.round(rate).toLocaleString("en-US")} rec/s, ${Math.round(perCpu).toLocaleString("en-US")} rec/CPU-s (${r.seconds.toFixed(3)} s, ${r.cpuSeconds.toFixed(3)} CPU-s, first delivery ${r.firstBatch})`;
            });
            log(`  ${what}: ${text.join("; ")}`);
          } catch (e) {
            for (const row of [...byPass, ...byPassCpu]) row.runs[side].push(null);
            log(`  ${what}: FAILED ${e instanceof Error ? e.message : e}`);
          }
        }
      }
      roundLoad.push({ round, before, after: load() });
      log(`bench:pc: round ${round}/${ROUNDS} took ${((Date.now() - tr) / 1000).toFixed(0)} s; load average ${before.join(" ")} → ${load().join(" ")}`);
    }
  } finally {
    await admin.disconnect();
  }
});

const loadAfter = load();
const req = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const brokerPom = readFileSync(join(ROOT, "test", "broker", "pom.xml"), "utf8");
const jv = runVersions.java ?? { event: "ready" };
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const versions = {
  offsetFrontier: `${pkg.version} (${git("rev-parse", "--short", "HEAD") ?? "?"}${git("status", "--porcelain", "--untracked-files=no") ? ", modified" : ""})`,
  node: process.version,
  kafkajs: (req("kafkajs/package.json") as { version: string }).version,
  java: str(jv.java),
  javaVm: str(jv.javaVm),
  parallelConsumer: str(jv.parallelConsumer),
  kafkaClients: str(jv.kafkaClients),
  broker: `Apache Kafka ${/<kafka.version>([^<]+)</.exec(brokerPom)?.[1] ?? "?"} (single-node KRaft, test/broker)`,
};
const summaries = rows.map((r) => ({
  id: r.id,
  group: r.group,
  label: r.label,
  unit: r.unit,
  names: r.names,
  runs: r.runs,
  java: summarize(r.runs.java),
  node: summarize(r.runs.node),
}));
const cs = checks(rows);
const machine = {
  cpus: os.cpus().length,
  model: os.cpus()[0]?.model ?? null,
  memGiB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  loadAverage: { before: loadBefore, after: loadAfter, rounds: roundLoad },
};
const out = {
  date: new Date().toISOString(),
  quick: QUICK,
  rounds: ROUNDS,
  minutes: +((Date.now() - t0) / 60_000).toFixed(1),
  machine,
  versions,
  settings: {
    example: { ...EXAMPLE, partitions: 1, work: "uniform random [0, 5) ms: Java LockSupport.parkNanos to the deadline; Node await setTimeout (Node rounds a timer up to ≥ 1 ms)" },
    noop: NOOP,
    pc: { options: "defaults (commitMode PERIODIC_CONSUMER_ASYNCHRONOUS, batchSize 1) except ordering and, in the example, maxConcurrency 100", commitIntervalMs: jv.commitIntervalMs ?? null, defaultMaxConcurrency: jv.defaultMaxConcurrency ?? null, consumer: "KafkaConsumer defaults, enable.auto.commit=false (PC requires it), auto.offset.reset=earliest" },
    ours: { options: "createKafkaJSConsumer defaults except ordering and, in the example, concurrency 100", commitIntervalMs: 1_000, defaultConcurrency: 16, consumer: "KafkaJS defaults except maxWaitTimeInMs 500 (the Java client's fetch.max.wait.ms default)" },
    plain: "Java KafkaConsumer poll(100 ms) loop and KafkaJS eachBatch, both counting records, auto-commit off, no commits",
    cpu: "records per CPU-second: the same records ÷ the CPU time (user + system, all threads) the consumer's process used over the same window (how much machine each side needs per record; a side that waits rather than computes has a higher rate per CPU-second than per second)",
    rate: "(records − records delivered with the first one) ÷ (first record started → last record finished); the subtrahend is 1 where a handler runs per record (PC, ours) and the first batch or poll for the plain loops",
    measured: "each run a fresh process; first record started → last record finished (monotonic clock of that process); first → committed: until this driver's KafkaJS admin, polling every 50 ms, saw committed = end offset (epoch clocks of the same machine)",
    passes: "no-op runs: each process reads the topic twice (pass 1 'cold' in a fresh process, pass 2 'warm' with a new consumer in a new group after pass 1's consumer closed); the example: one pass, a fresh process",
    order: "per round: example unordered, key, partition, then no-op unordered, key, plain; PC (or plain Java) first, then ours (or plain KafkaJS)",
  },
  rows: summaries,
  checks: cs,
};
writeResults(out);
