/**
 * One runtime's side of `npm run bench:consumer` (bench/consumer.bench.ts starts it once per
 * runtime: `node --import tsx`, `bun`, `deno run -A`): reads an existing topic with a no-op
 * handler through plain KafkaJS `eachBatch` and through the runner, in alternating rounds,
 * and prints one JSON line ({@link RunResult}) on stdout; progress goes to stderr.
 *
 * Each pass is a new KafkaJS consumer in a new group reading the whole topic from the start.
 * Window: the first delivered batch (plain) or the first handler call (runner) → the last
 * record; figures: records per wall-clock second and records per CPU-second of this process
 * (user + system over the same window).
 *
 * @module
 */
import process from "node:process";
import type { Consumer } from "kafkajs";
import { createKafkaJSConsumer, type Ordering } from "../adapters/kafkajs.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { cli, intFlag, runtimeName, usageError } from "./cli.ts";
import { listFlag } from "../scripts/cli.mjs";

/** The passes one process can run. */
export const VARIANTS = ["plain", "plain-autocommit", "unordered", "key", "partition"] as const;
/** A pass. */
export type Variant = typeof VARIANTS[number];

/** One measured pass: wall-clock and CPU-time rates over the same window. */
export interface Rate {
  /** Records per wall-clock second. */
  wall: number;
  /** Records per CPU-second of this process. */
  cpu: number;
  /** Commits the runner sent (0 for plain). */
  commits: number;
}

/** What the process prints on stdout (one line of JSON). */
export interface RunResult {
  runtime: string;
  version: string;
  rounds: Array<Partial<Record<Variant, Rate>>>;
  loadAverage: { before: number[]; after: number[] };
}

const NAME = "consumer_run";
const o = cli(
  NAME,
  `usage: (node --import tsx | bun | deno run -A) bench/consumer_run.ts --topic T --records N [options]

One runtime's passes of bench:consumer over an existing topic (KAFKA_BROKERS must be set).

  --topic T            the topic to read (whole, from the start)
  --records N          records in the topic
  --reps N             rounds (default 5); each runs every variant once, rotated
  --variants LIST      of ${VARIANTS.join(", ")} (default all)
  --warmup LIST        discarded passes first (default plain,key)
  --commit-mode M      the runner's commit.mode: eager (default) or interval
  --no-completed-set   the runner without completed sets in the commit metadata
  -h, --help           this text`,
  {
    topic: { type: "string" },
    records: { type: "string" },
    reps: { type: "string" },
    variants: { type: "string" },
    warmup: { type: "string" },
    "commit-mode": { type: "string" },
    "no-completed-set": { type: "boolean" },
  },
);
const brokers = process.env.KAFKA_BROKERS;
if (!brokers) usageError(NAME, "KAFKA_BROKERS is not set");
if (!o.topic) usageError(NAME, "--topic is required");
const TOPIC = o.topic!;
const RECORDS = intFlag(NAME, "records", o.records, 1);
const REPS = o.reps === undefined ? 5 : intFlag(NAME, "reps", o.reps, 1);
const VARS = (o.variants === undefined ? [...VARIANTS] : listFlag(NAME, "variants", o.variants, VARIANTS)) as Variant[];
const WARMUP = (o.warmup === undefined ? ["plain", "key"] : o.warmup === "" ? [] : listFlag(NAME, "warmup", o.warmup, VARIANTS)) as Variant[];
const MODE = (o["commit-mode"] ?? "eager") as "eager" | "interval";
if (!["eager", "interval"].includes(MODE)) usageError(NAME, `--commit-mode is eager or interval; got ${JSON.stringify(MODE)}`);
const COMPLETED_SET = o["no-completed-set"] !== true;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.now();
/** CPU seconds (user + system) this process used so far. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

function consumerFor(label: string): Consumer {
  return kafka(brokers!).consumer({ groupId: unique(`bench-${label}`), maxWaitTimeInMs: 100 });
}

async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what}`);
    await sleep(2);
  }
}

/** Plain KafkaJS eachBatch: counts every message; `autoCommit` false = no commits at all. */
async function plain(n: number, autoCommit: boolean): Promise<Rate> {
  const consumer = consumerFor("plain");
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  await consumer.run({
    autoCommit,
    eachBatch: ({ batch }) => {
      if (first === 0) (first = now()), (cpu0 = cpu());
      for (const m of batch.messages) if (m.offset !== "") count++;
      if (count >= n && last === 0) (last = now()), (cpu1 = cpu());
      return Promise.resolve();
    },
  });
  await waitUntil(() => count >= n, 300_000, `plain consumer: ${count}/${n}`);
  await consumer.disconnect();
  return { wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0), commits: 0 };
}

/** The runner with a no-op handler, default options but the commit mode and completed sets chosen. */
async function runner(n: number, ordering: Ordering): Promise<Rate> {
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  const controller = new AbortController();
  const c = createKafkaJSConsumer({
    consumer: consumerFor(`runner-${ordering}`),
    topics: [TOPIC],
    fromBeginning: true,
    ordering,
    signal: controller.signal,
    commit: { mode: MODE, ...(COMPLETED_SET ? {} : { completedSet: false }) },
    handler: () => {
      if (first === 0) (first = now()), (cpu0 = cpu());
      if (++count === n) (last = now()), (cpu1 = cpu());
    },
  });
  await c.start();
  await waitUntil(() => count >= n, 300_000, `runner: ${count}/${n}`);
  const commits = c.metrics().commits;
  controller.abort();
  await c.done;
  return { wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0), commits };
}

function pass(v: Variant): Promise<Rate> {
  switch (v) {
    case "plain":
      return plain(RECORDS, false);
    case "plain-autocommit":
      return plain(RECORDS, true);
    default:
      return runner(RECORDS, v);
  }
}

const rt = runtimeName();
const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
const version = rt === "bun" ? g.Bun!.version : rt === "deno" ? g.Deno!.version.deno : process.version.slice(1);
const os = await import("node:os");
const before = os.loadavg();
// Discarded passes first, so no variant pays the JIT's and the broker's cold start.
for (const v of WARMUP) await pass(v);
const rounds: RunResult["rounds"] = [];
for (let r = 0; r < REPS; r++) {
  // rotated: drift and position in the round hit every variant alike
  const order = VARS.map((_, i) => VARS[(i + r) % VARS.length]);
  const round: Partial<Record<Variant, Rate>> = {};
  for (const v of order) {
    const rate = await pass(v);
    round[v] = rate;
    process.stderr.write(
      `  ${rt} round ${r + 1}/${REPS} ${v}: ${Math.round(rate.wall).toLocaleString("en")} rec/s, ` +
        `${Math.round(rate.cpu).toLocaleString("en")} rec per CPU-s${rate.commits ? `, ${rate.commits} commits` : ""}\n`,
    );
  }
  rounds.push(round);
}
const two = (xs: number[]): number[] => xs.map((x) => +x.toFixed(2));
const result: RunResult = { runtime: rt, version, rounds, loadAverage: { before: two(before), after: two(os.loadavg()) } };
process.stdout.write(JSON.stringify(result) + "\n");
// KafkaJS may leave timers behind on some runtimes: the parent waits for this process to exit.
process.exit(0);
