/**
 * The runner's own cost per record, without a broker: batches of an in-memory client go
 * through `ParallelConsumer` (tracker, dispatcher, commits to a client that acknowledges at
 * once) with a no-op handler, in each ordering, against the floor of calling the handler
 * with a fresh context object per record. Records per second of each, and the runner's
 * extra nanoseconds per record over the floor (medians of the rounds). One more row: the
 * batch handler (`key` ordering, `batch: { maxRecords: 16, maxWaitMs: 0 }`, a no-op that
 * returns nothing: every record ok), timed until its last batch ran; maxWaitMs 0 so that
 * the round's last, partial batch runs on the next timer tick instead of 10 ms later.
 * Keys are Buffers, read as the bindings read them (`keyOf`: a latin1 string; `keyHashOf`:
 * a hash of the bytes); `--string-keys`: strings, and a client without `keyHashOf`.
 *
 * When both `unordered` and `key` run, one more line gives key ordering's cost against
 * unordered's, both over the floor, from the same process (the machine's load then weighs on
 * both alike): the ratio of their ns per record.
 *
 * `--alloc` (Node, Deno) adds the bytes each row allocates per record, read from V8's new space
 * over the batches no scavenge ran in: what the garbage collector is left to pay for.
 *
 * `--handlers sync,async` runs every ordering with both handlers in the same process: the one
 * that returns at once and the one that returns a resolved promise (the queued path, as every
 * handler that awaits takes), and a table of their ns per record and the difference, which is
 * what the async path adds per record. The async rows also get a floor of their own: the
 * handler called with a fresh context and one shared callback attached to each promise it
 * returns (the least any runner must do to learn that a record finished).
 *
 *     node --import tsx bench/consumer_path.ts [--batches N] [--batch N] [--rounds N] [--async | --handlers LIST] [--string-keys] [--cpu] [--alloc] [--orderings LIST] [--keys N]
 *     bun bench/consumer_path.ts …;  deno run -A bench/consumer_path.ts …
 *
 * @module
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import { keyBytesHash } from "../adapters/shared/key_hash.ts";
import { openTelemetryTracing, type OpenTelemetryTracer } from "../adapters/shared/tracing.ts";
import {
  type BatchContext,
  type ClientSink,
  type CommitOffset,
  type ConsumerClient,
  type Ordering,
  ParallelConsumer,
  type RecordContext,
} from "../core/mod.ts";
import { cli, intFlag, runtimeName, usageError } from "./cli.ts";

const NAME = "consumer_path";
const o = cli(
  NAME,
  `usage: node --import tsx bench/consumer_path.ts [options]   (or bun / deno run -A)

The runner's cost per record with a no-op handler, in memory (no broker), per ordering,
against calling the handler with a fresh context per record.

  --batches N   batches per round (default 30: 10 per partition, 3 partitions)
  --batch N     records per batch (default 10000, KafkaJS's size for 1 MB of small records)
  --rounds N    measured rounds after one discarded (default 7)
  --async       the handler returns a resolved promise (the queued path) instead of returning at once
                (the same as --handlers async)
  --handlers L  sync, async or both (comma-separated, run in that order for each ordering; default
                sync): with both, a table of sync and async ns per record and their difference
  --alloc       also the bytes each runner row allocates per record (V8 runtimes: Node and Deno):
                the new space's growth over each batch, from the batches no scavenge ran in
  --cpu         time by the process's CPU time (user + system, all threads) instead of the
                wall clock: steadier when other processes share the machine
  --string-keys keys are strings and the client has no keyHashOf (the batch check hashes keyOf's
                strings) instead of KafkaJS's Buffers with the bindings' keyOf and keyHashOf
  --keys N      distinct keys, record i's key k(i mod N) (default 10000: a delivery of 10,000 holds
                each key once; fewer keys make records of one key wait behind each other under key ordering)
  --tracing M   the runner's tracing: off (default), noop (on, the API's no-op tracer: no SDK
                registered), sdk (the SDK's AsyncLocalStorage context manager, W3C propagator and a
                tracer provider that records every span and exports none); records then carry a
                traceparent header
  --orderings L the orderings to run, comma-separated, in that order (default unordered,key,partition;
                the batch handler's row runs with key); with unordered and key, a line with
                key's ns per record over the floor ÷ unordered's
  -h, --help    this text`,
  {
    batches: { type: "string" },
    batch: { type: "string" },
    rounds: { type: "string" },
    async: { type: "boolean" },
    handlers: { type: "string" },
    "string-keys": { type: "boolean" },
    cpu: { type: "boolean" },
    alloc: { type: "boolean" },
    orderings: { type: "string" },
    keys: { type: "string" },
    tracing: { type: "string" },
  },
);
const TRACING = o.tracing ?? "off";
if (!["off", "noop", "sdk"].includes(TRACING)) usageError(NAME, `--tracing is off, noop or sdk; got ${JSON.stringify(TRACING)}`);
const BATCHES = o.batches === undefined ? 30 : intFlag(NAME, "batches", o.batches, 1);
const BATCH = o.batch === undefined ? 10_000 : intFlag(NAME, "batch", o.batch, 1);
const ROUNDS = o.rounds === undefined ? 7 : intFlag(NAME, "rounds", o.rounds, 1);
type HandlerKind = "sync" | "async";
const HANDLERS = (o.handlers ?? (o.async === true ? "async" : "sync")).split(",").map((x) => x.trim()) as HandlerKind[];
for (const x of HANDLERS) {
  if (x !== "sync" && x !== "async") usageError(NAME, `--handlers takes sync and async; got ${JSON.stringify(x)}`);
}
if (o.async === true && o.handlers !== undefined) usageError(NAME, "--async and --handlers: give one of them");
const STRING_KEYS = o["string-keys"] === true;
const CPU = o.cpu === true;
const ORDERINGS = (o.orderings ?? "unordered,key,partition").split(",").map((x) => x.trim()) as Ordering[];
for (const x of ORDERINGS) {
  if (x !== "unordered" && x !== "key" && x !== "partition") usageError(NAME, `--orderings takes unordered, key and partition; got ${JSON.stringify(x)}`);
}
/** Milliseconds on the chosen clock: the wall clock, or (`--cpu`) the process's CPU time. */
const now = CPU
  ? (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
  : (): number => performance.now();
const PARTITIONS = 3;

/**
 * `--alloc`: bytes the new space grew by over the batches no scavenge ran in (a scavenge empties
 * it, so a batch that ends with less than it began with is left out), and their records.
 */
const ALLOC = o.alloc === true;
const v8 = ALLOC ? await import("node:v8") : undefined;
if (ALLOC && process.versions.bun !== undefined) usageError(NAME, "--alloc needs V8's heap statistics: Node or Deno");
const newSpaceUsed = (): number => v8!.getHeapSpaceStatistics().find((x) => x.space_name === "new_space")!.space_used_size;
const allocated = { bytes: 0, records: 0 };
/** The bytes per record {@link allocated} holds, and how many records they come from; then starts anew. */
function takeAllocated(): string {
  const text = allocated.records === 0 ? "n/a" : `${Math.round(allocated.bytes / allocated.records)} B (${allocated.records.toLocaleString("en")} records)`;
  allocated.bytes = allocated.records = 0;
  return text;
}
/** With `--alloc`, adds what the new space grew by since `before` over `records` records, unless a scavenge ran. */
function countAllocated(before: number, records: number): void {
  const grew = newSpaceUsed() - before;
  if (grew >= 0) (allocated.bytes += grew, allocated.records += records);
}

/** The tracer of `--tracing` (sdk: the SDK registered globally first), or none. */
async function tracer(mode: string): Promise<OpenTelemetryTracer | undefined> {
  if (mode === "off") return undefined;
  const api = await import("@opentelemetry/api");
  if (mode === "sdk") {
    const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
    const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
    const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    api.trace.setGlobalTracerProvider(new BasicTracerProvider()); // every span recorded (always-on sampler), none exported
  }
  return api.trace.getTracer("bench");
}
const TRACER = await tracer(TRACING);
/** Every record's value (one Buffer: the runner and the tracer only read it). */
const VALUE = Buffer.from("x");
/** A producer's context, as traced records carry it. */
const TRACEPARENT = Buffer.from("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
const KEYS = o.keys === undefined ? 10_000 : intFlag(NAME, "keys", o.keys, 1);

/** A record as a client hands it over (KafkaJS-like: the offset as a string, the key and value as Buffers; with `--string-keys` the key a string). */
interface Msg {
  key: Buffer | string;
  value: Buffer;
  offset: string;
  headers?: Record<string, Buffer>;
}

/** An in-memory client: the bench delivers batches by hand; commits are acknowledged at once. */
class InMemoryClient implements ConsumerClient<Msg> {
  sink!: ClientSink<Msg>;
  commits = 0;
  start(sink: ClientSink<Msg>): Promise<void> {
    this.sink = sink;
    return Promise.resolve();
  }
  pause(): void {}
  resume(): void {}
  commit(_offsets: readonly CommitOffset[]): Promise<void> {
    this.commits++;
    return Promise.resolve();
  }
  stopFetching(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }
  keyOf(m: Msg): string | undefined {
    return typeof m.key === "string" ? m.key : m.key.toString("latin1"); // as the bindings do
  }
}

/** With Buffer keys: the bindings' key hash too (over the bytes, no string). */
class InMemoryBytesClient extends InMemoryClient {
  keyHashOf(m: Msg): number | undefined {
    return keyBytesHash(m.key as Buffer);
  }
}

/**
 * Batch `b` of round `r`: records of partition `b % 3` at consecutive offsets after the round's
 * earlier batches. Their Buffer keys are views into one Buffer of the batch's key bytes, as a
 * client's decoded records are views into its fetch response (KafkaJS and @platformatic/kafka
 * both slice them out of it): a `Buffer.from` per key would put each key in memory of its own
 * (on Deno a separate allocation, outside V8's heap), and reading the keys would then wait on
 * cache misses no client's records cause.
 */
function batch(r: number, b: number): { partition: number; messages: Msg[]; offsets: Float64Array; next: number } {
  const partition = b % PARTITIONS;
  const perRound = (BATCHES / PARTITIONS) * BATCH;
  const first = r * perRound + Math.floor(b / PARTITIONS) * BATCH;
  const messages: Msg[] = new Array(BATCH);
  const offsets = new Float64Array(BATCH);
  const keys: string[] = new Array(BATCH);
  for (let i = 0; i < BATCH; i++) keys[i] = `k${(first + i) % KEYS}`;
  const bytes = STRING_KEYS ? undefined : Buffer.from(keys.join(""), "latin1");
  for (let i = 0, at = 0; i < BATCH; i++) {
    const key = keys[i];
    messages[i] = { key: bytes === undefined ? key : bytes.subarray(at, at += key.length), value: VALUE, offset: String(first + i), ...(TRACER ? { headers: { traceparent: TRACEPARENT } } : {}) };
    offsets[i] = first + i;
  }
  return { partition, messages, offsets, next: first + BATCH };
}

/** Milliseconds `take` spends on the batches of round `r` (made one at a time, outside the timing, as a client decodes them). */
function timeRound(r: number, take: (b: ReturnType<typeof batch>) => void): number {
  let ms = 0;
  for (let b = 0; b < BATCHES; b++) {
    const x = batch(r, b);
    const t0 = now();
    take(x);
    ms += now() - t0;
  }
  return ms;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let sink = 0;
const noop = (m: Msg, c: RecordContext): void => {
  if (c.offset < 0) sink += m.value.length; // never: keeps the call from being optimised away
};

/** The floor: the handler called with a fresh context object per record. */
function floor(b: ReturnType<typeof batch>): void {
  for (let i = 0; i < b.messages.length; i++) {
    noop(b.messages[i], { topic: "t", partition: b.partition, offset: b.offsets[i], attempt: 1, signal: undefined! });
  }
}

/** {@link timeRound} for a `take` that settles later (the queued path): the time until it settled. */
async function timeRoundAsync(r: number, take: (b: ReturnType<typeof batch>) => Promise<void>): Promise<number> {
  let ms = 0;
  for (let b = 0; b < BATCHES; b++) {
    const x = batch(r, b);
    const used = ALLOC && r > 0 ? newSpaceUsed() : -1; // the warm-up round is not counted
    const t0 = now();
    await take(x);
    ms += now() - t0;
    if (used >= 0) countAllocated(used, x.messages.length);
  }
  return ms;
}

/**
 * The async floor: the async handler called with a fresh context per record, 16 at a time (the
 * runner's default concurrency), one shared callback on each promise that counts it and calls
 * the next record's handler: the least any runner must do to learn that a record finished.
 */
let floorHandled = 0;
function floorAsync(b: ReturnType<typeof batch>): Promise<void> {
  const n = b.messages.length;
  let next = 0, settled = 0, done: () => void;
  const call = (): void => {
    const i = next++;
    const ctx = { topic: "t", partition: b.partition, offset: b.offsets[i], attempt: 1, signal: undefined! };
    Promise.resolve(noop(b.messages[i], ctx)).then(() => void floorHandled++).then(settle);
  };
  const settle = (): void => {
    if (++settled === n) done();
    else if (next < n) call();
  };
  return new Promise<void>((resolve) => {
    done = resolve;
    for (let i = 0; i < 16 && next < n; i++) call();
  });
}

async function runner(ordering: Ordering, isAsync: boolean, batched = false): Promise<number[]> {
  const client = STRING_KEYS ? new InMemoryClient() : new InMemoryBytesClient();
  let handled = 0, delivered = 0;
  const handler = isAsync ? (m: Msg, ctx: RecordContext) => Promise.resolve(noop(m, ctx)).then(() => void handled++) : noop;
  const batchHandler = (messages: Msg[], { records }: BatchContext): void => {
    for (let i = 0; i < messages.length; i++) noop(messages[i], records[i]);
    handled += messages.length;
  };
  const c = new ParallelConsumer<Msg>(
    client,
    {
      ...(batched ? { ordering, batch: { maxRecords: 16, maxWaitMs: 0, handler: batchHandler } } : { ordering, handler }),
      ...(TRACER ? { tracing: openTelemetryTracing<Msg>({ tracer: TRACER }, () => "bench") } : {}),
    },
  );
  await c.start();
  client.sink.assigned(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: "t", partition })));
  const ms: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    ms.push(await timeRoundAsync(r, async (b) => {
      // a refused batch (backpressure) is delivered again once the runner caught up, as a client would
      while (!client.sink.deliver({ topic: "t", ...b })) await new Promise((r) => setTimeout(r, 0));
      delivered += BATCH;
      if (isAsync) while (handled < delivered) await new Promise((r) => setTimeout(r, 0)); // the batch finished
      // The batch handler: the round's last records may wait in a partial batch for the next tick.
      if (batched && b.next === (r + 1) * BATCHES / PARTITIONS * BATCH && b.partition === (BATCHES - 1) % PARTITIONS) {
        while (handled < delivered) await new Promise((r) => setTimeout(r, 0));
      }
    }));
    await new Promise((r) => setTimeout(r, 5)); // commits go out between rounds, as between fetches
  }
  await c.shutdown();
  if (c.metrics().completed !== (ROUNDS + 1) * BATCHES * BATCH) throw new Error("not every record completed");
  return ms.slice(1); // the first round is the warm-up
}

const records = BATCHES * BATCH;
const floorMs = median(Array.from({ length: ROUNDS + 1 }, (_, r) => timeRound(r, floor)).slice(1));
const rate = (ms: number): string => `${(records / ms / 1000).toFixed(2)} M rec/s`;
const nsOver = (ms: number): number => ((ms - floorMs) * 1e6) / records;
const version = process.versions.bun ?? (globalThis as { Deno?: { version: { deno: string } } }).Deno?.version.deno ??
  process.versions.node;
const handlerText = { sync: "returns at once", async: "returns a resolved promise" } as const;
console.log(
  `${runtimeName()} ${version}: ${records.toLocaleString("en")} records per round, ${ROUNDS} rounds, medians, ` +
    `handler ${HANDLERS.map((h) => handlerText[h]).join(" / ")}, ${KEYS.toLocaleString("en")} keys, ${STRING_KEYS ? "strings (no keyHashOf)" : "Buffers, views into one per batch (keyOf and keyHashOf as the bindings)"}, ${CPU ? "CPU time" : "wall clock"}, tracing ${TRACING}`,
);
console.log(`| path | records/s | ns per record over the floor |${ALLOC ? " bytes allocated per record |" : ""}`);
console.log(`|---|---:|---:|${ALLOC ? "---:|" : ""}`);
const allocCell = (): string => (ALLOC ? ` ${takeAllocated()} |` : "");
console.log(`| handler + fresh context (floor) | ${rate(floorMs)} | 0 |${ALLOC ? " |" : ""}`);
let asyncFloor: number | undefined;
if (HANDLERS.includes("async")) {
  const xs: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) xs.push(await timeRoundAsync(r, floorAsync));
  const ms = median(xs.slice(1)); // the first round is the warm-up
  asyncFloor = nsOver(ms);
  console.log(`| async handler + fresh context, 16 at a time, one shared callback (async floor) | ${rate(ms)} | ${asyncFloor.toFixed(0)} |${allocCell()}`);
}
const over = new Map<string, number>();
for (const ordering of ORDERINGS) {
  for (const h of HANDLERS) {
    const ms = median(await runner(ordering, h === "async"));
    over.set(`${ordering} ${h}`, nsOver(ms));
    console.log(`| runner, ${ordering}, ${h} | ${rate(ms)} | ${nsOver(ms).toFixed(0)} |${allocCell()}`);
  }
}
if (HANDLERS.includes("sync") && ORDERINGS.includes("key")) {
  const ms = median(await runner("key", false, true));
  console.log(`| runner, key, batch handler (16) | ${rate(ms)} | ${nsOver(ms).toFixed(0)} |${allocCell()}`);
}
if (HANDLERS.length === 2) {
  console.log("\n| ordering | sync ns | async ns | async − sync | async − async floor |");
  console.log("|---|---:|---:|---:|---:|");
  for (const ordering of ORDERINGS) {
    const s = over.get(`${ordering} sync`)!, a = over.get(`${ordering} async`)!;
    console.log(`| ${ordering} | ${s.toFixed(0)} | ${a.toFixed(0)} | ${(a - s).toFixed(0)} | ${(a - asyncFloor!).toFixed(0)} |`);
  }
}
for (const h of HANDLERS) {
  const k = over.get(`key ${h}`), u = over.get(`unordered ${h}`);
  if (k !== undefined && u !== undefined) console.log(`key ÷ unordered, ${h} (ns per record over the floor): ${(k / u).toFixed(2)}`);
}
if (sink !== 0) console.log(sink);
