/**
 * The Node side of `npm run bench:pc` (driven by bench/pc/run.ts, one process per measured
 * run), the counterpart of bench/pc/src/main/java/offsetfrontier/bench/PcBench.java:
 *
 *   node --import tsx bench/pc/ours.ts ours|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS
 *
 * - `ours`: the runner through `createKafkaJSConsumer` (adapters/kafkajs.ts), default options
 *   except `ordering` and, when CONCURRENCY > 0, `concurrency`; the handler awaits a timer of a
 *   uniform random [0, WORK_MS) ms (none when WORK_MS is 0);
 * - `plain`: plain KafkaJS `eachBatch` that only counts records (autoCommit off, no commits:
 *   the client's floor). ORDERING and CONCURRENCY are ignored.
 *
 * The KafkaJS consumer gets `maxWaitTimeInMs: 500`, the Java client's `fetch.max.wait.ms`
 * default (KafkaJS's own is 5,000). Protocol on stdout, one JSON object per line, as the Java
 * side: `ready`, `done` (first record started → last finished, epoch ms and a monotonic
 * duration), then wait for a line on stdin, stop, `closed`, exit 0.
 */
import { createRequire } from "node:module";
import process from "node:process";
import { createInterface } from "node:readline";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaJSConsumer, type Ordering } from "../../adapters/kafkajs.ts";

const [side, brokers, topic, groupId, recordsArg, ordering, concurrencyArg, workArg] = process.argv.slice(2);
const records = Number(recordsArg);
const concurrency = Number(concurrencyArg);
const workMs = Number(workArg);
if (!["ours", "plain"].includes(side) || !brokers || !topic || !groupId || !(records > 0) || !(workMs >= 0)) {
  console.error("usage: ours.ts ours|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS");
  process.exit(2);
}

const epochMs = (): number => performance.timeOrigin + performance.now();
const emit = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const kafkajsVersion = (createRequire(import.meta.url)("kafkajs/package.json") as { version: string }).version;
const kafka = new Kafka({ clientId: `bench-${side}`, brokers: brokers.split(","), logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });

let count = 0, firstBatch = 0, firstNanos = 0, firstEpoch = 0, lastNanos = 0, lastEpoch = 0;
let resolveDone!: () => void;
const done = new Promise<void>((r) => (resolveDone = r));
/** `batch`: records delivered with the first one (the first batch's size for plain eachBatch; 1 for a handler). */
const started = (batch: number): void => {
  if (firstEpoch === 0) (firstNanos = performance.now()), (firstEpoch = epochMs()), (firstBatch = batch);
};
const finished = (n: number): void => {
  count += n;
  if (count >= records && lastEpoch === 0) {
    (lastNanos = performance.now()), (lastEpoch = epochMs());
    resolveDone();
  }
};
const closeLine = (): Promise<void> =>
  new Promise((r) => {
    const rl = createInterface({ input: process.stdin });
    const end = (): void => (rl.close(), r());
    rl.once("line", end);
    rl.once("close", end);
  });

emit({ event: "ready", node: process.version, kafkajs: kafkajsVersion });
if (side === "ours") {
  const controller = new AbortController();
  const c = createKafkaJSConsumer({
    consumer,
    topics: [topic],
    fromBeginning: true,
    ordering: ordering as Ordering,
    ...(concurrency > 0 ? { concurrency } : {}),
    signal: controller.signal,
    handler: workMs > 0
      ? async () => {
        started(1);
        await sleep(Math.random() * workMs);
        finished(1);
      }
      : () => {
        started(1);
        finished(1);
      },
  });
  await c.start();
  await done;
  emit({ event: "done", count, firstBatch, firstEpochMs: firstEpoch, lastEpochMs: lastEpoch, seconds: (lastNanos - firstNanos) / 1000 });
  await closeLine();
  const t0 = performance.now();
  controller.abort();
  await c.done;
  emit({ event: "closed", count, closeSeconds: (performance.now() - t0) / 1000 });
} else {
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: ({ batch }) => {
      if (batch.messages.length > 0) started(batch.messages.length), finished(batch.messages.length);
      return Promise.resolve();
    },
  });
  await done;
  emit({ event: "done", count, firstBatch, firstEpochMs: firstEpoch, lastEpochMs: lastEpoch, seconds: (lastNanos - firstNanos) / 1000 });
  await closeLine();
  await consumer.disconnect();
  emit({ event: "closed", count, closeSeconds: 0 });
}
process.exit(0);
