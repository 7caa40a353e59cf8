/**
 * The Node side of `npm run bench:pc` (driven by bench/pc/run.ts, one process per measured
 * run), the counterpart of bench/pc/src/main/java/offsetfrontier/bench/PcBench.java:
 *
 *   node --import tsx bench/pc/ours.ts ours|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS PASSES
 *
 * - `ours`: the runner through `createKafkaJSConsumer` (adapters/kafkajs/mod.ts), default options
 *   except `ordering` and, when CONCURRENCY > 0, `concurrency`; the handler awaits a timer of a
 *   uniform random [0, WORK_MS) ms (none when WORK_MS is 0);
 * - `plain`: plain KafkaJS `eachBatch` that only counts records (autoCommit off, no commits:
 *   the client's floor). ORDERING and CONCURRENCY are ignored.
 *
 * The KafkaJS consumer gets `maxWaitTimeInMs: 500`, the Java client's `fetch.max.wait.ms`
 * default (KafkaJS's own is 5,000). PASSES: how many times the topic is read from the start,
 * each pass by a new consumer in group `GROUP-p<n>`, the previous one stopped first (pass 1
 * is a cold process, later ones run JIT-warm). Protocol on stdout, one JSON object per line,
 * as the Java side: `ready`, `done` per pass (first record started → last finished, epoch ms
 * and a monotonic duration), after the last pass wait for a line on stdin, stop, `closed`,
 * exit 0.
 */
import { createRequire } from "node:module";
import process from "node:process";
import { createInterface } from "node:readline";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaJSConsumer, type Ordering } from "../../adapters/kafkajs/mod.ts";

const [side, brokers, topic, groupId, recordsArg, ordering, concurrencyArg, workArg, passesArg] = process.argv.slice(2);
const records = Number(recordsArg);
const concurrency = Number(concurrencyArg);
const workMs = Number(workArg);
const passes = Number(passesArg);
if (!["ours", "plain"].includes(side) || !brokers || !topic || !groupId || !(records > 0) || !(workMs >= 0) || !(passes >= 1)) {
  console.error("usage: ours.ts ours|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS PASSES");
  process.exit(2);
}

const epochMs = (): number => performance.timeOrigin + performance.now();
const emit = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** CPU seconds (user + system) of this whole process, every thread (libuv pool, GC, JIT). */
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const kafkajsVersion = (createRequire(import.meta.url)("kafkajs/package.json") as { version: string }).version;
const kafka = new Kafka({ clientId: `bench-${side}`, brokers: brokers.split(","), logLevel: logLevel.ERROR });

const closeLine = (): Promise<void> =>
  new Promise((r) => {
    const rl = createInterface({ input: process.stdin });
    const end = (): void => (rl.close(), r());
    rl.once("line", end);
    rl.once("close", end);
  });

/** Counts finished records; stamps the first start and the RECORDS-th finish once. */
class Counter {
  count = 0;
  /** Records delivered with the first one (the first batch's size for plain eachBatch; 1 for a handler). */
  firstBatch = 0;
  firstNanos = 0;
  firstEpoch = 0;
  lastNanos = 0;
  lastEpoch = 0;
  firstCpu = 0;
  lastCpu = 0;
  #resolve!: () => void;
  readonly done = new Promise<void>((r) => (this.#resolve = r));
  started(batch: number): void {
    if (this.firstEpoch === 0) (this.firstNanos = performance.now()), (this.firstEpoch = epochMs()), (this.firstBatch = batch), (this.firstCpu = cpu());
  }
  finished(n: number): void {
    this.count += n;
    if (this.count >= records && this.lastEpoch === 0) {
      (this.lastNanos = performance.now()), (this.lastEpoch = epochMs()), (this.lastCpu = cpu());
      this.#resolve();
    }
  }
  doneEvent(pass: number): Record<string, unknown> {
    const { count, firstBatch } = this;
    return { event: "done", pass, count, firstBatch, firstEpochMs: this.firstEpoch, lastEpochMs: this.lastEpoch, seconds: (this.lastNanos - this.firstNanos) / 1000, cpuSeconds: this.lastCpu - this.firstCpu };
  }
}

/** One pass with a new consumer in group `g`; the last pass waits for the driver's close line. */
async function pass(n: number, g: string, last: boolean): Promise<void> {
  const consumer = kafka.consumer({ groupId: g, maxWaitTimeInMs: 500 });
  const c = new Counter();
  if (side === "ours") {
    const controller = new AbortController();
    const pc = createKafkaJSConsumer({
      consumer,
      topics: [topic],
      fromBeginning: true,
      ordering: ordering as Ordering,
      ...(concurrency > 0 ? { concurrency } : {}),
      signal: controller.signal,
      handler: workMs > 0
        ? async () => {
          c.started(1);
          await sleep(Math.random() * workMs);
          c.finished(1);
        }
        : () => {
          c.started(1);
          c.finished(1);
        },
    });
    await pc.start();
    await c.done;
    emit(c.doneEvent(n));
    if (last) await closeLine();
    const t0 = performance.now();
    controller.abort();
    await pc.done;
    if (last) emit({ event: "closed", count: c.count, closeSeconds: (performance.now() - t0) / 1000 });
  } else {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: ({ batch }) => {
        if (batch.messages.length > 0) c.started(batch.messages.length), c.finished(batch.messages.length);
        return Promise.resolve();
      },
    });
    await c.done;
    emit(c.doneEvent(n));
    if (last) await closeLine();
    await consumer.disconnect();
    if (last) emit({ event: "closed", count: c.count, closeSeconds: 0 });
  }
}

emit({ event: "ready", node: process.version, kafkajs: kafkajsVersion });
for (let n = 1; n <= passes; n++) await pass(n, `${groupId}-p${n}`, n === passes);
process.exit(0);
