/**
 * The Confluent binding against a real broker, beside KafkaJS's (`npm run bench:confluent`,
 * i.e. `node scripts/with-broker.mjs -- node --import tsx bench/confluent.bench.ts`; Node
 * only). Same shape as bench/consumer.bench.ts's (a): a no-op handler through the runner
 * vs the client's own plain `eachBatch` loop on the same topic (default 200,000 records,
 * 3 partitions), from the first delivered batch to the last record; records per
 * wall-clock second (median of the repetitions) and per CPU-second of this process,
 * each runner row as a ratio to its own client's plain loop. The Confluent consumer runs
 * with `js.consumer.max.batch.size` -1 (whole cached batches; the default 32 is also
 * measured for its plain loop) and the KIP-848 protocol.
 *
 * One discarded warm-up pass per client first; repetitions are interleaved and rotated.
 * Prints a table and writes bench/results/tmp/confluent.json.
 * Options: --records N, --reps N.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createKafkaJSConsumer, type Ordering } from "../adapters/kafkajs.ts";
import { createConfluentConsumer } from "../adapters/confluent.ts";
import { createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { confluentConfig, loadConfluent } from "../test/kafka/bindings.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { cli, intFlag } from "./cli.ts";

const o = cli(
  "confluent.bench",
  `usage: npm run bench:confluent -- [options]
       (node scripts/with-broker.mjs -- node --import tsx bench/confluent.bench.ts [options])

The Confluent binding vs the Confluent client's plain eachBatch loop, beside KafkaJS's
runner vs plain loop, on one topic of a real broker. Writes bench/results/tmp/confluent.json.

  --records N          records (default 200000)
  --reps N             repetitions (default 3)
  -h, --help           this text`,
  { records: { type: "string" }, reps: { type: "string" } },
);
const RECORDS = o.records === undefined ? 200_000 : intFlag("confluent.bench", "records", o.records, 1);
const REPS = o.reps === undefined ? 3 : intFlag("confluent.bench", "reps", o.reps, 1);

interface Rate {
  wall: number;
  cpu: number;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.now();
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what}`);
    await sleep(2);
  }
}

const { KafkaJS } = loadConfluent();
const confluentKafka = (brokers: string) => new KafkaJS.Kafka({ kafkaJS: { brokers: brokers.split(","), logLevel: KafkaJS.logLevel.ERROR } });

/** A counting window: first call starts it, the n-th ends it. */
function meter(n: number): { tick(k: number): void; done(): boolean; rate(): Rate } {
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  return {
    tick(k) {
      if (first === 0) (first = now()), (cpu0 = cpu());
      count += k;
      if (count >= n && last === 0) (last = now()), (cpu1 = cpu());
    },
    done: () => count >= n,
    rate: () => ({ wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0) }),
  };
}

async function kafkajsPlain(brokers: string, topic: string, n: number): Promise<Rate> {
  const consumer = kafka(brokers).consumer({ groupId: unique("bench-kjs-plain"), maxWaitTimeInMs: 100 });
  const m = meter(n);
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ autoCommit: false, eachBatch: ({ batch }) => (m.tick(batch.messages.length), Promise.resolve()) });
  await waitUntil(m.done, 300_000, "kafkajs plain");
  await consumer.disconnect();
  return m.rate();
}

async function kafkajsRunner(brokers: string, topic: string, n: number, ordering: Ordering): Promise<Rate> {
  const m = meter(n);
  const controller = new AbortController();
  const c = createKafkaJSConsumer({
    consumer: kafka(brokers).consumer({ groupId: unique("bench-kjs-runner"), maxWaitTimeInMs: 100 }),
    topics: [topic],
    fromBeginning: true,
    ordering,
    signal: controller.signal,
    handler: () => m.tick(1),
  });
  await c.start();
  await waitUntil(m.done, 300_000, "kafkajs runner");
  controller.abort();
  await c.done;
  return m.rate();
}

async function confluentPlain(brokers: string, topic: string, n: number, batchSize: number): Promise<Rate> {
  const config = { ...confluentConfig(unique("bench-cf-plain"), "consumer"), "js.consumer.max.batch.size": batchSize };
  const consumer = confluentKafka(brokers).consumer({ ...config, "enable.auto.commit": false, "auto.offset.reset": "earliest" });
  const m = meter(n);
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({ eachBatch: ({ batch }) => (m.tick(batch.messages.length), Promise.resolve()) });
  await waitUntil(m.done, 300_000, "confluent plain");
  await consumer.disconnect();
  return m.rate();
}

async function confluentRunner(brokers: string, topic: string, n: number, ordering: Ordering): Promise<Rate> {
  const m = meter(n);
  const controller = new AbortController();
  const c = createConfluentConsumer({
    kafka: confluentKafka(brokers),
    config: confluentConfig(unique("bench-cf-runner"), "consumer"),
    topics: [topic],
    fromBeginning: true,
    ordering,
    signal: controller.signal,
    handler: () => m.tick(1),
  });
  await c.start();
  await waitUntil(m.done, 300_000, "confluent runner");
  controller.abort();
  await c.done;
  return m.rate();
}

await withBroker(async (brokers) => {
  const topic = unique("bench-confluent");
  await createTopic(brokers, topic, 3);
  const payload = "x".repeat(64);
  for (let i = 0; i < RECORDS; i += 50_000) {
    const n = Math.min(50_000, RECORDS - i);
    await produce(brokers, topic, Array.from({ length: n }, (_, j) => ({ value: `${i + j}:${payload}` })));
  }
  console.error(`produced ${RECORDS} records (3 partitions: ${[...(await endOffsets(brokers, topic)).values()].join("/")})`);
  const variants: Array<{ name: string; base: string; run: () => Promise<Rate> }> = [
    { name: "kafkajs plain eachBatch", base: "kafkajs plain eachBatch", run: () => kafkajsPlain(brokers, topic, RECORDS) },
    { name: "kafkajs runner, unordered", base: "kafkajs plain eachBatch", run: () => kafkajsRunner(brokers, topic, RECORDS, "unordered") },
    { name: "kafkajs runner, key", base: "kafkajs plain eachBatch", run: () => kafkajsRunner(brokers, topic, RECORDS, "key") },
    { name: "confluent plain eachBatch (batch 32)", base: "confluent plain eachBatch", run: () => confluentPlain(brokers, topic, RECORDS, 32) },
    { name: "confluent plain eachBatch", base: "confluent plain eachBatch", run: () => confluentPlain(brokers, topic, RECORDS, -1) },
    { name: "confluent runner, unordered", base: "confluent plain eachBatch", run: () => confluentRunner(brokers, topic, RECORDS, "unordered") },
    { name: "confluent runner, key", base: "confluent plain eachBatch", run: () => confluentRunner(brokers, topic, RECORDS, "key") },
  ];
  await kafkajsPlain(brokers, topic, RECORDS); // warm-ups, discarded
  await confluentRunner(brokers, topic, RECORDS, "key");
  const rates: Record<string, Rate[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < REPS; r++) {
    for (const v of variants.map((_, i) => variants[(i + r) % variants.length])) {
      const rate = await v.run();
      rates[v.name].push(rate);
      console.error(`  rep ${r + 1}/${REPS} ${v.name}: ${Math.round(rate.wall).toLocaleString("en")} rec/s, ${Math.round(rate.cpu).toLocaleString("en")} rec per CPU-s`);
    }
  }
  const rows = variants.map((v) => {
    const wall = median(rates[v.name].map((x) => x.wall));
    const cpuRate = median(rates[v.name].map((x) => x.cpu));
    const baseWall = median(rates[v.base].map((x) => x.wall));
    const baseCpu = median(rates[v.base].map((x) => x.cpu));
    return { name: v.name, wall: Math.round(wall), cpu: Math.round(cpuRate), ratioWall: +(wall / baseWall).toFixed(3), ratioCpu: +(cpuRate / baseCpu).toFixed(3) };
  });
  console.log(`records ${RECORDS}, reps ${REPS}, node ${process.version}`);
  console.log(`${"variant".padEnd(40)} ${"rec/s".padStart(10)} ${"rec/CPU-s".padStart(10)}  ratio (wall, CPU) to its client's plain loop`);
  for (const r of rows) console.log(`${r.name.padEnd(40)} ${String(r.wall).padStart(10)} ${String(r.cpu).padStart(10)}  ${r.ratioWall} ${r.ratioCpu}`);
  const out = join(dirname(fileURLToPath(import.meta.url)), "results", "tmp", "confluent.json");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ records: RECORDS, reps: REPS, node: process.version, rows, rates }, null, 2) + "\n");
});
