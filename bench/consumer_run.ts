/**
 * One runtime's side of `npm run bench:consumer` (bench/consumer.bench.ts starts it once per
 * runtime: `node --import tsx`, `bun`, `deno run -A`, and once more on Node with
 * `--client confluent`, and once per runtime with `--client platformatic`, Node 24 for Node):
 * reads an existing topic with a no-op handler through the client's own plain loop (`eachBatch`;
 * for `@platformatic/kafka` its `consume()` stream) and through the runner's binding for that
 * client, in alternating rounds,
 * and prints one JSON line ({@link RunResult}) on stdout; progress goes to stderr.
 *
 * Each pass is a new consumer in a new group reading the whole topic from the start. The
 * Confluent client (Node only) runs with the KIP-848 protocol, `fetch.wait.max.ms` 100 and
 * `js.consumer.max.batch.size` -1 (whole fetched batches) on both sides.
 * Window, on both sides: the client's first `eachBatch` call (for the runner, the binding's,
 * whether it took the batch or not; for `@platformatic/kafka`, both sides: the first Fetch
 * request sent, see {@link tappedPlatformatic}) → the last record; figures: records per wall-clock
 * second and records per CPU-second of this process (user + system over the same window).
 * (Starting the runner's window at its first handler call instead would leave out records
 * the client fetched while the runner held a new partition for its committed read: the
 * Confluent client had then buffered the whole topic in some passes, 3 M rec/s.)
 *
 * @module
 */
import process from "node:process";
import type { Consumer } from "kafkajs";
import { createKafkaJSConsumer, type OpenTelemetryTracer, type Ordering } from "../adapters/kafkajs/mod.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import type { ConfluentKafka } from "../adapters/confluent/types.ts";
import { cli, intFlag, runtimeName, usageError } from "./cli.ts";
import { listFlag } from "../scripts/cli.mjs";
import { asyncFloor, meter, PASS_MS, type Rate, StalledPass, sleep, waitUntil } from "./pass_meter.ts";

/** The clients a process can measure. */
export const CLIENTS = ["kafkajs", "confluent", "platformatic"] as const;
/** A client. */
export type Client = typeof CLIENTS[number];

/**
 * The passes one process can run. `unordered-async` and `key-async`: the runner in that
 * ordering with a no-op handler that returns a resolved promise, rotated in the same rounds as
 * `unordered` and `key` (whose handler returns at once), so that async ÷ sync pairs passes of
 * one process and one round. `plain-async`: the client's plain loop (no runner) with a
 * resolved promise and one then() per record, the floor any runner's async path stands on.
 */
export const VARIANTS = ["plain", "plain-autocommit", "unordered", "key", "partition", "batch", "unordered-async", "key-async", "plain-async"] as const;
/** A pass. */
export type Variant = typeof VARIANTS[number];

export type { Rate } from "./pass_meter.ts";

/** What the process prints on stdout (one line of JSON). */
export interface RunResult {
  runtime: string;
  /** The client both sides ran on: `kafkajs` or `confluent`. */
  client: Client;
  /** The client's version. */
  clientVersion: string;
  version: string;
  rounds: Array<Partial<Record<Variant, Rate>>>;
  /** Passes that stalled (left out of the rounds): round, variant, what was reached. */
  stalls: Array<{ round: number; variant: Variant; error: string }>;
  loadAverage: { before: number[]; after: number[] };
  /** bench:consumer `--processes`: how many of `rounds` each process ran, in order (absent: one process). */
  processRounds?: number[];
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
  --client C           ${CLIENTS.join(" or ")} (default kafkajs; confluent: Node only; platformatic: Node >= 22.22)
  --warmup LIST        discarded passes first (default plain,key)
  --commit-mode M      the runner's commit.mode: eager (default) or interval
  --no-completed-set   the runner without completed sets in the commit metadata
  --async-handler      the runner's handlers return a resolved promise (default: they return at once);
                       unordered-async and key-async always do (the paired way: sync and async
                       passes in the same rounds)
  --max-wait-ms N      KafkaJS consumers' maxWaitTimeInMs (default 100; KafkaJS's own default is 5000)
  --tracing M          the runner's tracing (docs/tracing.md): off (default), noop (on, with the API's
                       no-op tracer: no SDK registered), sdk (the SDK's AsyncLocalStorage context
                       manager, W3C propagator and a tracer provider that records every span and
                       exports none), sdk-batch (the same, every span through the SDK's
                       BatchSpanProcessor to an exporter that drops each batch)
  -h, --help           this text`,
  {
    topic: { type: "string" },
    records: { type: "string" },
    reps: { type: "string" },
    variants: { type: "string" },
    client: { type: "string" },
    warmup: { type: "string" },
    "commit-mode": { type: "string" },
    "no-completed-set": { type: "boolean" },
    "async-handler": { type: "boolean" },
    "max-wait-ms": { type: "string" },
    tracing: { type: "string" },
  },
);
const TRACING = o.tracing ?? "off";
if (!["off", "noop", "sdk", "sdk-batch"].includes(TRACING)) usageError(NAME, `--tracing is off, noop, sdk or sdk-batch; got ${JSON.stringify(TRACING)}`);
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
const ASYNC = o["async-handler"] === true;
const MAX_WAIT_MS = o["max-wait-ms"] === undefined ? 100 : intFlag(NAME, "max-wait-ms", o["max-wait-ms"], 0);
const CLIENT = (o.client ?? "kafkajs") as Client;
if (!CLIENTS.includes(CLIENT)) usageError(NAME, `--client is ${CLIENTS.join(" or ")}; got ${JSON.stringify(CLIENT)}`);

/** The runners' `tracing` option for `--tracing` (sdk: the SDK registered globally first). */
async function tracingOption(mode: string): Promise<false | { tracer: OpenTelemetryTracer }> {
  if (mode === "off") return false;
  const api = await import("@opentelemetry/api");
  if (mode === "sdk" || mode === "sdk-batch") {
    const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
    const { ExportResultCode, W3CTraceContextPropagator } = await import("@opentelemetry/core");
    const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // sdk: every span recorded (always-on sampler), none exported. sdk-batch: every span also
    // goes through the SDK's BatchSpanProcessor, as in production, to an exporter that drops
    // each batch (the network's cost is the exporter's, not the runner's).
    const dropping = { export: (_: unknown, done: (r: { code: number }) => void) => done({ code: ExportResultCode.SUCCESS }), shutdown: async () => {} };
    api.trace.setGlobalTracerProvider(new BasicTracerProvider(mode === "sdk" ? {} : { spanProcessors: [new BatchSpanProcessor(dropping)] }));
  }
  return { tracer: api.trace.getTracer("bench") };
}
const TRACING_OPTION = await tracingOption(TRACING);

function consumerFor(label: string): Consumer {
  return kafka(brokers!).consumer({ groupId: unique(`bench-${label}`), maxWaitTimeInMs: MAX_WAIT_MS });
}


/**
 * Plain KafkaJS eachBatch: counts every message; `autoCommit` false = no commits at all.
 * `asyncHandler` (`plain-async`): through {@link asyncFloor}, the batch ending once all are counted.
 */
async function plainKafkaJS(n: number, autoCommit: boolean, asyncHandler = false): Promise<Rate> {
  const consumer = consumerFor("plain");
  const m = meter(n);
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  await consumer.run({
    autoCommit,
    eachBatch: ({ batch }) => {
      if (asyncHandler) {
        return new Promise<void>((resolve) => asyncFloor(batch.messages, (msg) => msg.offset !== "" && m.tick(1), resolve));
      }
      let k = 0;
      for (const msg of batch.messages) if (msg.offset !== "") k++;
      m.tick(k);
      return Promise.resolve();
    },
  });
  await waitUntil(m.done, PASS_MS, "plain consumer");
  await consumer.disconnect();
  return m.rate(0);
}

/** `consumer` (KafkaJS's or Confluent's), whose `run` calls `onBatch` before each `eachBatch` call. */
function tapBatches<C extends object>(consumer: C, onBatch: () => void): C {
  type Run = (config: { eachBatch?: (payload: unknown) => unknown }) => Promise<void>;
  const run = (consumer as unknown as { run: Run }).run.bind(consumer);
  const tapped: Run = (config) => {
    const eachBatch = config.eachBatch;
    return run(eachBatch === undefined ? config : { ...config, eachBatch: (payload) => (onBatch(), eachBatch(payload)) });
  };
  return Object.assign(consumer, { run: tapped });
}

/** Records in one batch of the `batch` variant: the default `concurrency` (16), so a batch runs as soon as every worker holds a record. */
export const BATCH_RECORDS = 16;

/**
 * The runner with a no-op handler (with `asyncHandler`, by default `--async-handler`, it returns a
 * resolved promise), default options but the commit mode and completed sets chosen. `batch`:
 * the batch handler instead (no-op, every record ok: it returns nothing, or a resolved promise),
 * `key` ordering, `batch: { maxRecords: 16 }`, the other options the same.
 */
async function runner(n: number, ordering: Ordering, batch = false, asyncHandler = ASYNC): Promise<Rate> {
  const m = meter(n);
  const controller = new AbortController();
  const options = {
    fromBeginning: true,
    ordering,
    signal: controller.signal,
    commit: COMPLETED_SET ? { mode: MODE } : { mode: MODE, completedSet: false as const },
    tracing: TRACING_OPTION,
    ...(batch
      ? {
        batch: {
          maxRecords: BATCH_RECORDS,
          handler: (_: unknown[], { records }: { records: readonly { partition: number; offset: number }[] }) => {
            for (const r of records) m.seen(r.partition, r.offset);
            return asyncHandler ? Promise.resolve() : undefined;
          },
        },
      }
      : {
        handler: asyncHandler
          ? (_: unknown, ctx: { partition: number; offset: number }) => (m.seen(ctx.partition, ctx.offset), Promise.resolve())
          : (_: unknown, ctx: { partition: number; offset: number }) => m.seen(ctx.partition, ctx.offset),
      }),
  };
  const c = CLIENT === "platformatic"
    ? (await import("../adapters/platformatic/mod.ts")).createPlatformaticConsumer({
      ...options,
      consumer: await tappedPlatformatic(`runner-${ordering}`, m.begin),
      topics: [TOPIC],
      maxWaitTime: 100,
    })
    : CLIENT === "confluent"
    ? (await import("../adapters/confluent/mod.ts")).createConfluentConsumer({
      ...options,
      kafka: tappedKafka(await confluentKafka(), m.begin),
      config: confluentConfig(`runner-${ordering}`),
      topics: [TOPIC],
    })
    : createKafkaJSConsumer({ ...options, consumer: tapBatches(consumerFor(`runner-${ordering}`), m.begin), topics: [TOPIC] });
  await c.start();
  try {
    await waitUntil(m.done, PASS_MS, `runner ${ordering} (${m.count()} of ${n} records)`);
  } finally {
    controller.abort();
    await Promise.race([c.done.catch(() => {}), sleep(30_000)]);
  }
  return m.rate(c.metrics().commits);
}

let confluent: { kafka: ConfluentKafka; version: string } | undefined;
/** The Confluent client (loaded on first use; Node only). */
async function confluentKafka(): Promise<ConfluentKafka> {
  if (!confluent) {
    const { loadConfluent } = await import("../test/kafka/bindings.ts");
    const { CONFLUENT_VERSION } = await import("../scripts/install-confluent.mjs");
    const { KafkaJS } = loadConfluent();
    confluent = {
      kafka: new KafkaJS.Kafka({ kafkaJS: { brokers: brokers!.split(","), logLevel: KafkaJS.logLevel.ERROR } }),
      version: CONFLUENT_VERSION,
    };
  }
  return confluent.kafka;
}

/** `kafka`, whose consumers' batches call `onBatch` first ({@link tapBatches}). */
function tappedKafka(kafka: ConfluentKafka, onBatch: () => void): ConfluentKafka {
  return new Proxy(kafka, {
    get: (target, prop) =>
      prop === "consumer"
        ? (config: Parameters<ConfluentKafka["consumer"]>[0]) => tapBatches(target.consumer(config), onBatch)
        : Reflect.get(target, prop, target),
  });
}

/** The Confluent consumer config of a pass (the same on both sides). */
function confluentConfig(label: string): Record<string, string | number | boolean> {
  return { "group.id": unique(`bench-${label}`), "group.protocol": "consumer", "fetch.wait.max.ms": 100, "js.consumer.max.batch.size": -1 };
}

/** The Confluent client's plain eachBatch (its defaults resolve each batch): counts every message. */
async function plainConfluent(n: number, autoCommit: boolean, asyncHandler = false): Promise<Rate> {
  const kafkaClient = await confluentKafka();
  // `as never`: ConfluentKafka types consumer()'s config as never, so that any client's own typing fits
  const consumer = kafkaClient.consumer({ ...confluentConfig("plain"), "enable.auto.commit": autoCommit, "auto.offset.reset": "earliest" } as never);
  const m = meter(n);
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC] });
  await consumer.run({
    eachBatch: ({ batch }) =>
      asyncHandler
        ? new Promise<void>((resolve) => asyncFloor(batch.messages, () => m.tick(1), resolve)) // plain-async
        : (m.tick(batch.messages.length), Promise.resolve()),
  });
  await waitUntil(m.done, PASS_MS, "confluent plain consumer");
  await consumer.disconnect();
  return m.rate(0);
}

/**
 * A `@platformatic/kafka` consumer in a new group whose first Fetch *request* calls `onFetch`:
 * the window of both platformatic sides starts when the first Fetch is sent, so that it holds
 * every Fetch's round trip and decoding. (Starting it at the first answer, as before, left the
 * first response out: the stream's default `maxBytesPerPartition` is its `maxBytes`, 50 MB, so
 * its first answer could hold the whole topic and the plain rate measured only the stream's
 * emission, 0.25-2.5 M rec/s from pass to pass; the binding fetches 1 MB per partition.)
 */
async function tappedPlatformatic(label: string, onFetch: () => void, options: Record<string, unknown> = {}) {
  const { Consumer } = await import("@platformatic/kafka");
  const consumer = new Consumer({ groupId: unique(`bench-${label}`), clientId: unique("bench"), bootstrapBrokers: brokers!.split(","), ...options });
  const fetch = consumer.fetch.bind(consumer) as (...args: unknown[]) => unknown;
  // The stream calls fetch(options, callback); the binding awaits fetch(options).
  const tapped = (...args: unknown[]) => (onFetch(), fetch(...args));
  return Object.assign(consumer, { fetch: tapped as typeof consumer.fetch });
}

/**
 * The `@platformatic/kafka` client's own `consume()` stream (the plain loop): counts every message.
 * `asyncHandler` (`plain-async`): each message counted through a resolved promise's then(), as in {@link asyncFloor}.
 */
async function plainPlatformatic(n: number, autocommit: boolean, asyncHandler = false): Promise<Rate> {
  const m = meter(n);
  // The binding's fetch sizes (1 MB per partition; the client's own default is its maxBytes,
  // 50 MB, one answer for the whole topic here, slower: 367 k against 830-920 k rec/s for the
  // runner in 5 rounds on Node 24), so that both sides fetch alike.
  const consumer = await tappedPlatformatic("plain", m.begin, { maxWaitTime: 100, maxBytesPerPartition: 1_048_576 });
  const stream = await consumer.consume({ topics: [TOPIC], mode: "earliest", autocommit });
  type Msg = { partition: number; offset: bigint };
  const seen = (msg: Msg): void => m.seen(msg.partition, Number(msg.offset));
  // plain-async: asyncFloor per message, without its array and closures (one record at a time)
  stream.on("data", asyncHandler ? (msg: Msg) => void Promise.resolve(msg).then(seen) : seen);
  await waitUntil(m.done, PASS_MS, "platformatic plain consumer");
  await stream.close();
  await consumer.close(true);
  return m.rate(0);
}

function pass(v: Variant): Promise<Rate> {
  switch (v) {
    case "plain":
      return CLIENT === "platformatic" ? plainPlatformatic(RECORDS, false) : CLIENT === "confluent" ? plainConfluent(RECORDS, false) : plainKafkaJS(RECORDS, false);
    case "plain-async":
      return CLIENT === "platformatic" ? plainPlatformatic(RECORDS, false, true) : CLIENT === "confluent" ? plainConfluent(RECORDS, false, true) : plainKafkaJS(RECORDS, false, true);
    case "plain-autocommit":
      return CLIENT === "platformatic" ? plainPlatformatic(RECORDS, true) : CLIENT === "confluent" ? plainConfluent(RECORDS, true) : plainKafkaJS(RECORDS, true);
    case "batch":
      return runner(RECORDS, "key", true);
    case "unordered-async":
      return runner(RECORDS, "unordered", false, true);
    case "key-async":
      return runner(RECORDS, "key", false, true);
    default:
      return runner(RECORDS, v);
  }
}

const rt = runtimeName();
if (CLIENT === "confluent" && rt !== "node") usageError(NAME, `--client confluent runs on Node only; this is ${rt}`);
const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
const version = rt === "bun" ? g.Bun!.version : rt === "deno" ? g.Deno!.version.deno : process.version.slice(1);
const os = await import("node:os");
const before = os.loadavg();
// Discarded passes first, so no variant pays the JIT's and the broker's cold start.
for (const v of WARMUP) await pass(v);
const rounds: RunResult["rounds"] = [];
const stalls: RunResult["stalls"] = [];
for (let r = 0; r < REPS; r++) {
  // rotated: drift and position in the round hit every variant alike
  const order = VARS.map((_, i) => VARS[(i + r) % VARS.length]);
  const round: Partial<Record<Variant, Rate>> = {};
  for (const v of order) {
    let rate: Rate;
    try {
      rate = await pass(v);
    } catch (error) {
      if (!(error instanceof StalledPass)) throw error;
      stalls.push({ round: r + 1, variant: v, error: error.message });
      process.stderr.write(`  ${rt} round ${r + 1}/${REPS} ${v}: STALLED (${error.message})\n`);
      continue;
    }
    round[v] = rate;
    process.stderr.write(
      `  ${rt} round ${r + 1}/${REPS} ${v}: ${Math.round(rate.wall).toLocaleString("en")} rec/s, ` +
        `${Math.round(rate.cpu).toLocaleString("en")} rec per CPU-s${rate.commits ? `, ${rate.commits} commits` : ""}\n`,
    );
  }
  rounds.push(round);
}
const two = (xs: number[]): number[] => xs.map((x) => +x.toFixed(2));
const { readFileSync } = await import("node:fs");
const kafkajsVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../node_modules/kafkajs/package.json", import.meta.url), "utf8")) as { version: string }).version;
const platformaticVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../node_modules/@platformatic/kafka/package.json", import.meta.url), "utf8")) as { version: string }).version;
const clientVersion = CLIENT === "confluent" ? confluent?.version ?? "" : CLIENT === "platformatic" ? platformaticVersion() : kafkajsVersion();
const result: RunResult = { runtime: rt, client: CLIENT, clientVersion, version, rounds, stalls, loadAverage: { before: two(before), after: two(os.loadavg()) } };
process.stdout.write(JSON.stringify(result) + "\n");
// KafkaJS may leave timers behind on some runtimes: the parent waits for this process to exit.
process.exit(0);
