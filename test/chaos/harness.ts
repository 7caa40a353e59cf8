/**
 * The chaos harness: rounds of a consumer group under faults, counted from fsynced logs.
 *
 * One broker per run (test/broker/broker.ts) with a second client listener behind a TCP
 * proxy (test/chaos/proxy.ts) that every member goes through; the harness's own clients
 * (producer, admin, the dead-letter reader) use the direct listener. Per round:
 * - a fresh topic of 6 partitions and its `.DLT` (1 partition); `records` records
 *   produced while the faults run (spread over the first 70 % of the fault window, in
 *   chunks, each record pinned to `hash(key) % 6`), keyed by a few hundred keys, the
 *   value a per-key sequence number; one poison record (key `poison`) in the middle;
 * - 3 members (test/chaos/member.ts) on the chosen runtime, a late joiner;
 * - a seeded schedule of faults: every 1–4 s a random live member is SIGKILLed (a
 *   quarter: SIGTERMed) and replaced; once the broker is SIGKILLed and restarted on the
 *   same data dir and ports after 2–5 s (or, in an outage round, after `outageMs`);
 *   a few times live proxied connections are destroyed;
 * - then the round waits until the group's committed offsets equal the end offsets of
 *   every partition (or `drainTimeoutMs`), SIGTERMs the members still running (SIGKILL
 *   after {@link TERM_GRACE_MS}), and counts (test/chaos/analyze.ts).
 * Production is held while the broker is down (and no send is in flight when it is
 * killed). What the group had to consume is read back from the topic at the end; the
 * produce responses must agree with it.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { type Broker, committedOffsets, createTopic, endOffsets, startBroker } from "../broker/broker.ts";
import { countLogs, DUPLICATE_CAUSES, type DuplicateCause, type MemberFate, type MemberInfo, type Outage, type ProducedRecord } from "./analyze.ts";
import { CLIENTS, type ClientName, type ClientSpec, MODES, type ModeName } from "./modes.ts";
import { ensureNode } from "../../scripts/install-node.mjs";
import { startProxy, type Proxy } from "./proxy.ts";
import { readCommitted } from "../kafka/read_committed.ts";
import type { MemberConfig } from "./member.ts";
import { hash, POISON_KEY, rng } from "./workload.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

/**
 * How long a SIGTERMed member may take to exit before it is SIGKILLed: the runner's
 * shutdown grace (10 s by default) plus its commit and disconnect, with room to spare.
 */
export const TERM_GRACE_MS = 20_000;

/** The runtime the members run on. */
export type MemberRuntime = "node" | "bun" | "deno";

/** Settings of a chaos run. */
export interface ChaosOptions {
  rounds: number;
  runtime: MemberRuntime;
  /** Records per round, the poison included (default 30,000). */
  records?: number;
  /** Seed of the first round; round i uses `seed + i − 1` (default: random). */
  seed?: number;
  /** Every N-th round is an outage round (0: none). */
  outageEvery?: number;
  /** How long an outage round keeps the broker down (default 60,000 ms). */
  outageMs?: number;
  /** How long faults are injected per round (default 24,000 ms). */
  faultMs?: number;
  /** After the faults: how long to wait for committed = end (default 180,000 ms). */
  drainTimeoutMs?: number;
  /** Distinct keys (default 300). */
  keys?: number;
  /** Members at the start of a round (default 3). */
  members?: number;
  mode?: ModeName;
  client?: ClientName;
  /** `batch`: the members run the batch handler with per-record results (member.ts). Default `record`. */
  handler?: "record" | "batch";
  /**
   * KafkaJS members: `without` (default) call `consume()` as the docs show it, with only the
   * KafkaJS consumer; `with` also pass `kafka` (the KafkaJS client). Exactly-once always passes it.
   */
  kafkajsKafka?: "with" | "without";
  /** Keep the logs (their directory is reported). */
  keepLogs?: boolean;
  /**
   * Start the fault schedule and the production when the first member has joined the group
   * (at most 120 s after the start) instead of at the members' spawn: clients whose members
   * take longer to start (module loading, the first coordinator lookup) then meet the same
   * faults with work under way, rather than joining only after the broker restart.
   */
  faultsAfterJoin?: boolean;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

/** What one round measured. */
export interface RoundResult {
  round: number;
  seed: number;
  runtime: MemberRuntime;
  /** Records in the topic (the poison included): what the group had to consume. */
  records: number;
  /** Records the harness's producer wrote twice (a retried request that had been written); part of `records`. */
  produceDuplicates: number;
  lost: number;
  duplicates: number;
  orderViolations: number;
  committedEqualsEnd: boolean;
  /** The poison is in the DLT (one or more copies) and the DLT holds nothing else. */
  deadLettered: boolean;
  /** Copies of the poison in the DLT (more than one: dead-lettered again after a redo). */
  deadLetterCopies: number;
  /** Members that exited without being signalled. */
  exitedOnOwn: number;
  /** Members that had to be SIGKILLed because a SIGTERM (mid-round or final) did not end them within {@link TERM_GRACE_MS}. */
  termForced: number;
  duplicatesBy: Record<DuplicateCause, number>;
  /** Duplicates whose earlier finish an acknowledged commit of its own assignment had covered (analyze.ts). */
  redoneAfterCommit: number;
  /** Every finish (duplicates included). */
  finishes: number;
  /** Log lines naming a record that was not produced there. */
  mismatches: number;
  /** The poison was logged as finished (it must not be: its handler always throws). */
  poisonFinished: boolean;
  /** Member starts that failed (`consume()` rejected; the member exited). */
  startFailures: number;
  /** Consumers that failed for good while running (`done` rejected; the member exited). */
  consumerFailures: number;
  /** Faults injected. */
  sigkills: number;
  sigterms: number;
  brokerRestarts: number;
  /** How long the broker was down (kill to answering again), ms. */
  brokerDownMs: number;
  /** Proxied connections destroyed. */
  connectionsDropped: number;
  /** Member processes in the round. */
  processes: number;
  /** From the end of the faults until committed = end (or the timeout), ms. */
  settleMs: number;
  timedOut: boolean;
  durationMs: number;
  /** Extra counts of the mode (none for at-least-once). */
  extra: Record<string, number | boolean>;
  /** Set when the round could not be run to the end. */
  error?: string;
  /** Where the logs are, with `keepLogs`. */
  logDir?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How to run test/chaos/<file> on a runtime. */
function memberCommand(rt: MemberRuntime, client: ClientSpec): [string, string[]] {
  const path = join(HERE, client.member);
  const bin = (name: string): string => join(ROOT, "node_modules", ".bin", name);
  if (rt === "bun") return [bin("bun"), [path]];
  if (rt === "deno") return [bin("deno"), ["run", "--allow-all", path]];
  return [client.newerNode !== undefined ? ensureNode(client.newerNode, { quiet: true }) : process.execPath, ["--import", "tsx", path]];
}

/** The child processes alive now, SIGKILLed if the harness exits first. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

interface Member {
  id: string;
  proc: ChildProcess;
  pid: number;
  log: string;
  /** The signal the harness sent mid-round. */
  signal?: "SIGKILL" | "SIGTERM";
  final: boolean;
  exit?: { code: number | null; signal: string | null };
  exited: Promise<void>;
  stderr: string;
}

/** A fault of the schedule, at `at` ms from the round's start. */
type Fault =
  | { at: number; kind: "kill"; signal: "SIGKILL" | "SIGTERM" }
  | { at: number; kind: "join" }
  | { at: number; kind: "broker"; downMs: number }
  | { at: number; kind: "drop"; connections: number };

/**
 * The seeded fault schedule of a round: member kills every 1–4 s from 1 s on (a quarter
 * SIGTERM; with two or more kills, at least one of each), a late joiner, one broker
 * restart, 3–5 connection drops.
 */
export function schedule(seed: number, faultMs: number, outageMs: number | undefined): Fault[] {
  const r = rng(seed ^ 0x5eed);
  const faults: Fault[] = [];
  const kills: Array<Fault & { kind: "kill" }> = [];
  for (let t = 1_000 + r() * 3_000; t < faultMs; t += 1_000 + r() * 3_000) {
    kills.push({ at: Math.round(t), kind: "kill", signal: r() < 0.25 ? "SIGTERM" : "SIGKILL" });
  }
  if (kills.length >= 2) {
    if (!kills.some((k) => k.signal === "SIGTERM")) kills[1 + Math.floor(r() * (kills.length - 1))].signal = "SIGTERM";
    if (!kills.some((k) => k.signal === "SIGKILL")) kills[0].signal = "SIGKILL";
  }
  faults.push(...kills);
  faults.push({ at: Math.round(faultMs * (0.2 + 0.3 * r())), kind: "join" });
  faults.push({ at: Math.round(faultMs * (0.35 + 0.25 * r())), kind: "broker", downMs: outageMs ?? Math.round(2_000 + 3_000 * r()) });
  const drops = 3 + Math.floor(r() * 3);
  for (let i = 0; i < drops; i++) {
    faults.push({ at: Math.round(faultMs * (0.05 + 0.9 * r())), kind: "drop", connections: 1 + Math.floor(r() * 3) });
  }
  return faults.sort((a, b) => a.at - b.at);
}

/** The records of a round, in production order (offsets unknown until produced). */
function workload(seed: number, records: number, keys: number): Array<{ key: string; partition: number; seq: number }> {
  const seqs = new Array<number>(keys).fill(0);
  const out: Array<{ key: string; partition: number; seq: number }> = [];
  const poisonAt = Math.floor(records / 2);
  for (let i = 0; i < records; i++) {
    if (i === poisonAt) {
      out.push({ key: POISON_KEY, partition: hash(seed, 4) % 6, seq: -1 });
      continue;
    }
    const k = hash(seed, 3, i) % keys;
    out.push({ key: `k${k}`, partition: hash(seed, 5, k) % 6, seq: seqs[k]++ });
  }
  return out;
}

function kafka(brokers: string, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [brokers], logLevel: logLevel.NOTHING });
}

/** Produces the round's records in chunks over `spanMs`, held while `gate.closed`. */
class Production {
  readonly produced: ProducedRecord[] = [];
  closed = false;
  #inFlight: Promise<void> | undefined;
  readonly done: Promise<void>;

  constructor(producer: Producer, topic: string, records: ReturnType<typeof workload>, spanMs: number) {
    this.done = this.#run(producer, topic, records, spanMs);
    this.done.catch(() => {});
  }

  /** Holds production; resolves once no send is in flight. */
  async hold(): Promise<void> {
    this.closed = true;
    await this.#inFlight?.catch(() => {});
  }

  release(): void {
    this.closed = false;
  }

  async #run(producer: Producer, topic: string, records: ReturnType<typeof workload>, spanMs: number): Promise<void> {
    const CHUNK_MS = 100;
    const chunks = Math.max(1, Math.floor(spanMs / CHUNK_MS));
    const per = Math.ceil(records.length / chunks);
    const t0 = Date.now();
    for (let c = 0, i = 0; i < records.length; c++) {
      const wait = t0 + c * CHUNK_MS - Date.now();
      if (wait > 0) await sleep(wait);
      while (this.closed) await sleep(50);
      const chunk = records.slice(i, i + per);
      i += chunk.length;
      const send = (async () => {
        const res = await producer.send({
          topic,
          acks: -1,
          messages: chunk.map((r) => ({ key: r.key, value: r.key === POISON_KEY ? POISON_KEY : String(r.seq), partition: r.partition })),
        });
        // One response per partition: its records got baseOffset, baseOffset + 1, … in chunk order.
        const next = new Map<number, number>();
        for (const p of res) next.set(p.partition, Number(p.baseOffset));
        for (const r of chunk) {
          const offset = next.get(r.partition);
          if (offset === undefined) throw new Error(`no produce response for partition ${r.partition}`);
          next.set(r.partition, offset + 1);
          this.produced.push({ partition: r.partition, offset, key: r.key, seq: r.seq, poison: r.key === POISON_KEY });
        }
      })();
      this.#inFlight = send;
      await send;
    }
  }
}

/** A record read back from a topic. */
interface ReadRecord {
  partition: number;
  offset: number;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** Reads every record of `topic` from the beginning to the end offsets of now (direct listener). */
async function readAll(brokers: string, topic: string): Promise<ReadRecord[]> {
  const ends = await endOffsets(brokers, topic);
  const want = [...ends.values()].reduce((n, e) => n + Number(e), 0);
  if (want === 0) return [];
  const consumer = kafka(brokers, "chaos-reader").consumer({
    groupId: `chaos-reader-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    maxWaitTimeInMs: 100,
  });
  const out: ReadRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let resolveAll!: () => void;
    const all = new Promise<void>((r) => (resolveAll = r));
    await consumer.run({
      eachBatch: ({ batch }) => {
        const end = Number(ends.get(batch.partition) ?? 0);
        for (const m of batch.messages) {
          if (Number(m.offset) >= end) continue;
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = String(v);
          out.push({ partition: batch.partition, offset: Number(m.offset), key: m.key?.toString() ?? "", value: m.value?.toString() ?? "", headers });
        }
        if (out.length >= want) resolveAll();
        return Promise.resolve();
      },
    });
    const timer = sleep(60_000).then(() => "timeout" as const);
    if ((await Promise.race([all.then(() => "ok" as const), timer])) === "timeout") {
      throw new Error(`read only ${out.length} of ${want} records of ${topic} within 60 s`);
    }
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  return out;
}

/** A run's broker and proxy. */
interface Cluster {
  broker: Broker;
  proxy: Proxy;
}

/** Starts the broker (its log, restarts included, in `logDir` when given) behind a fresh proxy. */
async function startCluster(logDir?: string): Promise<Cluster> {
  const proxy = await startProxy();
  try {
    const broker = await startBroker({ advertisedPort: proxy.port, ...(logDir !== undefined ? { logDir } : {}) });
    proxy.target = broker.proxiedPort;
    return { broker, proxy };
  } catch (e) {
    await proxy.close();
    throw e;
  }
}

async function stopCluster(c: Cluster): Promise<void> {
  await c.proxy.close();
  await c.broker.stop();
}

/** Runs `o.rounds` rounds on one broker; returns every round's result (a failed round carries `error`). */
export async function runChaos(o: ChaosOptions): Promise<RoundResult[]> {
  const progress = o.progress ?? (() => {});
  const seed0 = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  progress(`starting the broker and the proxy …`);
  // With keepLogs the broker's log is kept too: a broker that comes back from a restart unwell is read there.
  const cluster = await startCluster(o.keepLogs ? mkdtempSync(join(tmpdir(), "offset-frontier-chaos-broker-")) : undefined);
  progress(`broker ${cluster.broker.brokers} (pid ${cluster.broker.pid}), proxy 127.0.0.1:${cluster.proxy.port} → ${cluster.proxy.target}` +
    (o.keepLogs ? `, broker log ${cluster.broker.logFile}` : ""));
  const results: RoundResult[] = [];
  try {
    for (let round = 1; round <= o.rounds; round++) {
      const seed = (seed0 + round - 1) >>> 0;
      const outage = !!o.outageEvery && round % o.outageEvery === 0;
      const t0 = Date.now();
      let r: RoundResult;
      try {
        r = await runRound(cluster, o, round, seed, outage);
      } catch (e) {
        r = failedRound(o, round, seed, Date.now() - t0, e instanceof Error ? e.stack ?? e.message : String(e));
        // The broker may be down after a failure mid-restart: bring it back for the next round.
        if (!cluster.broker.running) await cluster.broker.restart().catch(() => {});
      }
      results.push(r);
      progress(summaryLine(r));
    }
  } finally {
    await stopCluster(cluster);
  }
  return results;
}

function failedRound(o: ChaosOptions, round: number, seed: number, durationMs: number, error: string): RoundResult {
  return {
    round, seed, runtime: o.runtime, records: 0, produceDuplicates: 0, lost: 0, duplicates: 0, orderViolations: 0,
    committedEqualsEnd: false, deadLettered: false, deadLetterCopies: 0, exitedOnOwn: 0, termForced: 0,
    duplicatesBy: Object.fromEntries(DUPLICATE_CAUSES.map((c) => [c, 0])) as Record<DuplicateCause, number>,
    redoneAfterCommit: 0, finishes: 0, mismatches: 0,
    poisonFinished: false, startFailures: 0, consumerFailures: 0, sigkills: 0, sigterms: 0, brokerRestarts: 0, brokerDownMs: 0, connectionsDropped: 0,
    processes: 0, settleMs: 0, timedOut: false, durationMs, extra: {}, error,
  };
}

/** One line per round for the progress stream. */
export function summaryLine(r: RoundResult): string {
  if (r.error) return `round ${r.round} (seed ${r.seed}) FAILED: ${r.error.split("\n")[0]}`;
  const by = Object.entries(r.duplicatesBy).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ");
  return `round ${r.round} (seed ${r.seed}, ${r.runtime}): records ${r.records}, lost ${r.lost}, duplicates ${r.duplicates}` +
    (by ? ` (${by}; redone after a commit covered them ${r.redoneAfterCommit})` : "") + `, order violations ${r.orderViolations}, committed=end ${r.committedEqualsEnd}, ` +
    `dead-lettered ${r.deadLettered} (${r.deadLetterCopies}), exited on own ${r.exitedOnOwn}, ` +
    `consumer failures ${r.consumerFailures}, start failures ${r.startFailures}, SIGTERM ignored ${r.termForced}; ` +
    `${r.sigkills} SIGKILL, ${r.sigterms} SIGTERM, broker down ${(r.brokerDownMs / 1000).toFixed(1)} s, ` +
    `${r.connectionsDropped} connections dropped; settled in ${(r.settleMs / 1000).toFixed(1)} s` +
    (r.timedOut ? " (TIMED OUT)" : "") + `, ${(r.durationMs / 1000).toFixed(0)} s`;
}

async function runRound(cluster: Cluster, o: ChaosOptions, round: number, seed: number, outage: boolean): Promise<RoundResult> {
  const progress = o.progress ?? (() => {});
  const records = o.records ?? 30_000;
  const faultMs = o.faultMs ?? 24_000;
  const mode = MODES[o.mode ?? "at-least-once"];
  const client = CLIENTS[o.client ?? "kafkajs"];
  const { broker, proxy } = cluster;
  const direct = broker.brokers;
  const stamp = `${Date.now().toString(36)}-${seed.toString(36)}`;
  const topic = `chaos-${stamp}-r${round}`;
  const group = `${topic}-group`;
  const dlt = `${topic}.DLT`;
  const dir = mkdtempSync(join(tmpdir(), "offset-frontier-chaos-"));
  const roundStart = Date.now();
  let t0 = roundStart; // the fault clock (reset at the first join with faultsAfterJoin)
  let joined: () => void = () => {};
  const firstJoin = new Promise<void>((r) => (joined = r));
  const members: Member[] = [];
  let memberSeq = 0;
  const outages: Outage[] = [];
  let sigkills = 0, sigterms = 0, dropped = 0;
  const dropRandom = rng(seed ^ 0xd209);
  // The harness's own timeline (absolute ms), beside the members' logs: for reading them.
  const note = (line: string): void => appendFileSync(join(dir, "harness.log"), `${Date.now()}\t${line}\n`);
  const say = (line: string): void => {
    note(line.trim());
    progress(line);
  };

  const spawnMember = (): Member => {
    const id = `m${++memberSeq}`;
    const log = join(dir, `${id}.log`);
    const cfg: MemberConfig = {
      member: id, brokers: `127.0.0.1:${proxy.port}`, topic, group, log, seed, concurrency: 32, parent: process.pid, mode: mode.name,
      ...(o.handler === "batch" ? { handler: "batch" as const } : {}),
      ...(o.kafkajsKafka === "with" ? { kafka: "with" as const } : {}),
    };
    const [cmd, args] = memberCommand(o.runtime, client);
    const proc = spawn(cmd, [...args, JSON.stringify(cfg)], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: "1" },
    });
    children.add(proc);
    note(`spawned ${id} pid ${proc.pid}`);
    const m: Member = { id, proc, pid: proc.pid ?? -1, log, final: false, stderr: "", exited: Promise.resolve() };
    m.exited = new Promise<void>((res) => {
      proc.on("exit", (code, signal) => {
        children.delete(proc);
        m.exit = { code, signal };
        note(`${id} exited: code ${code}, signal ${signal}`);
        if (!m.signal && !m.final) say(`  ${id} (pid ${m.pid}) exited on its own: code ${code}, signal ${signal}; ${m.stderr.trim().slice(-500)}`);
        res();
      });
    });
    proc.on("error", (e) => (m.stderr += `spawn: ${e.message}\n`));
    proc.stdout!.setEncoding("utf8");
    proc.stdout!.on("data", (d: string) => {
      if (d.includes('"event":"joined"')) joined();
    });
    proc.stderr!.setEncoding("utf8");
    proc.stderr!.on("data", (d: string) => (m.stderr = (m.stderr + d).slice(-8_000)));
    members.push(m);
    return m;
  };
  const live = (): Member[] => members.filter((m) => !m.exit && !m.signal && !m.final);
  const signal = async (m: Member, sig: "SIGKILL" | "SIGTERM"): Promise<void> => {
    kill(m, sig);
    const timer = sleep(TERM_GRACE_MS).then(() => "timeout" as const);
    if ((await Promise.race([m.exited.then(() => "ok" as const), timer])) === "timeout") {
      kill(m, "SIGKILL");
      await m.exited;
    }
  };
  const stops: Array<Promise<void>> = [];

  try {
    await createTopic(direct, topic, 6);
    await createTopic(direct, dlt, 1);
    for (const t of mode.topics(topic)) await createTopic(direct, t.name, t.partitions);
    const faults = schedule(seed, faultMs, outage ? o.outageMs ?? 60_000 : undefined);
    say(`round ${round}: topic ${topic}, ${records} records, seed ${seed}, ${faults.length} faults over ${faultMs / 1000} s` +
      (o.handler === "batch" ? ", batch handler" : "") +
      ((o.client ?? "kafkajs") === "kafkajs" ? `, consume() ${o.kafkajsKafka === "with" ? "with" : "without"} kafka` : "") +
      (outage ? ` (outage round: broker down ${(o.outageMs ?? 60_000) / 1000} s)` : ""));
    for (let i = 0; i < (o.members ?? 3); i++) spawnMember();
    if (o.faultsAfterJoin) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = await Promise.race([firstJoin.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 120_000)))]);
      clearTimeout(timer);
      t0 = Date.now();
      say(`  ${((t0 - roundStart) / 1000).toFixed(1)}s ${waited ? "first member joined" : "no member joined in 120 s"}: the fault clock starts`);
    }

    const producer = kafka(direct, "chaos-producer").producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const production = new Production(producer, topic, workload(seed, records, o.keys ?? 300), faultMs * 0.7);

    const runFault = async (f: Fault): Promise<void> => {
      await sleep(Math.max(0, t0 + f.at - Date.now()));
      const at = ((Date.now() - t0) / 1000).toFixed(1);
      if (f.kind === "kill") {
        const candidates = live();
        if (candidates.length === 0) return;
        const victim = candidates[Math.floor(dropRandom() * candidates.length)];
        victim.signal = f.signal;
        if (f.signal === "SIGKILL") sigkills++;
        else sigterms++;
        const repl = spawnMember();
        say(`  ${at}s ${f.signal} ${victim.id} (pid ${victim.pid}); replaced by ${repl.id}`);
        stops.push(signal(victim, f.signal));
      } else if (f.kind === "join") {
        const m = spawnMember();
        say(`  ${at}s late joiner ${m.id}`);
      } else if (f.kind === "drop") {
        // Nothing to drop yet (members connecting, broker down): wait up to 3 s for connections.
        for (let i = 0; i < 30 && proxy.open === 0; i++) await sleep(100);
        const n = proxy.drop(f.connections, dropRandom);
        dropped += n;
        say(`  ${((Date.now() - t0) / 1000).toFixed(1)}s dropped ${n} of ${proxy.open + n} proxied connections`);
      } else {
        await production.hold();
        const downAt = Date.now();
        await broker.kill();
        say(`  ${at}s broker SIGKILLed; restarting in ${(f.downMs / 1000).toFixed(1)} s`);
        await sleep(f.downMs);
        try {
          await broker.restart();
        } finally {
          outages.push({ downAt, upAt: Date.now() });
          production.release();
        }
        say(`  ${((Date.now() - t0) / 1000).toFixed(1)}s broker back (pid ${broker.pid}) after ${((Date.now() - downAt) / 1000).toFixed(1)} s`);
      }
    };
    await Promise.all(faults.map(runFault));
    note("faults done");
    await production.done;
    note("production done");
    await producer.disconnect();
    await Promise.all(stops);
    note("signalled members gone");
    const faultsEnd = Date.now();
    say(`  ${((faultsEnd - t0) / 1000).toFixed(1)}s faults over, ${production.produced.length} records produced; waiting for committed = end`);

    // Settle: the last members run until the group committed every partition's end.
    const drainTimeout = o.drainTimeoutMs ?? 180_000;
    let timedOut = false;
    let lastReport = Date.now();
    for (;;) {
      const [committed, ends] = await Promise.all([committedOffsets(direct, group, topic), endOffsets(direct, topic)]);
      const behind = [...ends].reduce((n, [p, end]) => n + Number(end) - Number(committed.get(p) ?? 0), 0);
      if (behind === 0) break;
      if (Date.now() - faultsEnd > drainTimeout) {
        timedOut = true;
        say(`  timed out with ${behind} records not committed`);
        break;
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        say(`  ${((Date.now() - t0) / 1000).toFixed(0)}s ${behind} records not committed yet, ${live().length} members running`);
      }
      await sleep(500);
    }
    const settleMs = Date.now() - faultsEnd;

    // Stop the last members gracefully.
    const last = live();
    for (const m of last) m.final = true;
    await Promise.all(last.map((m) => signal(m, "SIGTERM")));

    const [committed, ends] = await Promise.all([committedOffsets(direct, group, topic), endOffsets(direct, topic)]);
    let committedEqualsEnd = true;
    for (const [p, end] of ends) if (String(committed.get(p) ?? "") !== String(end)) committedEqualsEnd = false;
    // The topic read back is the truth: what the members had to consume. The produce
    // responses must agree with it; a record the producer sent twice (a retried request
    // that had been written) is in it twice, at two offsets, and counted in `produceDuplicates`.
    const content = await readAll(direct, topic);
    const produced: ProducedRecord[] = content.map((c) => ({
      partition: c.partition,
      offset: c.offset,
      key: c.key,
      seq: c.key === POISON_KEY ? -1 : Number(c.value),
      poison: c.key === POISON_KEY,
    }));
    const at = new Map(produced.map((r) => [`${r.partition}:${r.offset}`, r]));
    const produceMissing = production.produced.filter((r) => {
      const got = at.get(`${r.partition}:${r.offset}`);
      return !got || got.key !== r.key || got.seq !== r.seq;
    }).length;
    if (produceMissing > 0) throw new Error(`${produceMissing} acknowledged records are not in the topic where the broker said`);
    const produceDuplicates = produced.length - new Set(produced.map((r) => `${r.key}\u0000${r.seq}`)).size;
    if (produceDuplicates > 0) say(`  the topic holds ${produceDuplicates} records twice (a produce retry after the broker restart)`);

    const poison = production.produced.find((r) => r.poison)!;
    // Exactly-once: the dead letters were produced in transactions, whose markers take offsets.
    const letters = mode.name === "exactly-once" ? await readCommitted(direct, dlt) : await readAll(direct, dlt);
    const isPoison = (l: ReadRecord): boolean =>
      l.key === POISON_KEY && l.value === POISON_KEY && l.headers["x-offset-frontier-topic"] === topic &&
      l.headers["x-offset-frontier-partition"] === String(poison.partition) &&
      l.headers["x-offset-frontier-offset"] === String(poison.offset);
    const deadLetterCopies = letters.filter(isPoison).length;

    const infos: MemberInfo[] = members.map((m) => ({ member: m.id, pid: m.pid, fate: fateOf(m) }));
    const logs = members.map((m) => (existsSync(m.log) ? readFileSync(m.log, "utf8") : ""));
    const counts = countLogs(topic, produced, logs, infos, outages);
    const extra = await mode.count({ brokers: direct, topic, group, inputs: produced, runtime: o.runtime });
    if (o.handler === "batch") Object.assign(extra, countBatches(logs));
    return {
      round,
      seed,
      runtime: o.runtime,
      records: produced.length,
      produceDuplicates,
      lost: counts.lost,
      duplicates: counts.duplicates,
      orderViolations: counts.orderViolations,
      committedEqualsEnd,
      deadLettered: deadLetterCopies >= 1 && deadLetterCopies === letters.length,
      deadLetterCopies,
      exitedOnOwn: infos.filter((m) => m.fate === "exited").length,
      termForced: members.filter((m) => (m.signal === "SIGTERM" || m.final) && m.exit?.signal === "SIGKILL").length,
      duplicatesBy: counts.duplicatesBy,
      redoneAfterCommit: counts.redoneAfterCommit,
      finishes: counts.finishes,
      mismatches: counts.mismatches,
      poisonFinished: counts.poisonFinished,
      startFailures: counts.startFailures,
      consumerFailures: counts.consumerFailures,
      sigkills,
      sigterms,
      brokerRestarts: outages.length,
      brokerDownMs: outages.reduce((n, x) => n + x.upAt - x.downAt, 0),
      connectionsDropped: dropped,
      processes: members.length,
      settleMs,
      timedOut,
      durationMs: Date.now() - roundStart,
      extra,
      ...(o.keepLogs ? { logDir: dir } : {}),
    };
  } finally {
    for (const m of members) if (!m.exit) kill(m, "SIGKILL");
    await Promise.all(members.map((m) => m.exited));
    if (!o.keepLogs) rmSync(dir, { recursive: true, force: true });
  }
}

/** The batch handler's `B` lines (member.ts), over every member: batches run, the records they held (attempts), the largest. */
function countBatches(logs: readonly string[]): { batches: number; batchedRecords: number; largestBatch: number } {
  let batches = 0, batchedRecords = 0, largestBatch = 0;
  for (const text of logs) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("B\t")) continue;
      const size = Number(line.split("\t").at(-1));
      if (!Number.isFinite(size)) continue; // a torn last line
      batches++;
      batchedRecords += size;
      largestBatch = Math.max(largestBatch, size);
    }
  }
  return { batches, batchedRecords, largestBatch };
}

/**
 * Signals a member by pid: Deno's `ChildProcess.kill()` does nothing once it was called
 * (a SIGKILL after a SIGTERM would never be sent).
 */
function kill(m: Member, sig: "SIGKILL" | "SIGTERM"): void {
  try {
    process.kill(m.pid, sig);
  } catch {
    // already gone
  }
}

function fateOf(m: Member): MemberFate {
  if (m.signal === "SIGKILL") return "sigkill";
  if (m.signal === "SIGTERM") return "sigterm";
  if (m.final) return "final-stop";
  return "exited";
}
