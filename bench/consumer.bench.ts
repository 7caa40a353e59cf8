/**
 * The parallel consumer against a real broker (`npm run bench:consumer`, i.e.
 * `node scripts/with-broker.mjs -- node --import tsx bench/consumer.bench.ts`).
 *
 * (a) Overhead: a no-op handler through the runner vs plain KafkaJS `eachBatch` on the
 *     same topic (default 300,000 records, 3 partitions), from the first delivered
 *     batch to the last record: records per wall-clock second (median and best of the
 *     repetitions) and records per CPU-second of this process (median; robust when
 *     other processes share the machine), each as a ratio to plain KafkaJS without
 *     commits (the faster plain variant).
 * (b) The Parallel Consumer's published example: 10,000 records, random 0–5 ms of work,
 *     concurrency 100, on ONE partition as in its README ("A single partition"); PC
 *     reports 2.829 s unordered, 2.056 s key-ordered with 1,000 keys, 22.221 s
 *     partition-ordered. Durations here: first record started → last record finished.
 *
 * One discarded warm-up pass first; repetitions are interleaved and rotated.
 * Prints a table and writes bench/results/tmp/consumer.json (with --save: the committed
 * bench/results/consumer.json).
 * Options: --records N (a), --reps N (a; b uses max(1, reps − 2)), --skip-partition, --save.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { Consumer } from "kafkajs";
import { createKafkaJSConsumer, type Ordering } from "../adapters/kafkajs.ts";
import { createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { cli, intFlag } from "./cli.ts";

const o = cli(
  "consumer.bench",
  `usage: npm run bench:consumer -- [options]
       (node scripts/with-broker.mjs -- node --import tsx bench/consumer.bench.ts [options])

The parallel consumer against a real broker: (a) overhead vs plain KafkaJS, (b) the
Parallel Consumer's published example. Prints a table; writes bench/results/tmp/consumer.json.

  --records N          records of (a) (default 300000)
  --reps N             repetitions of (a); (b) uses max(1, N - 2) (default 5)
  --skip-partition     skip (b)'s partition-ordered run (the slow one)
  --save               write the committed bench/results/consumer.json instead
  -h, --help           this text`,
  { records: { type: "string" }, reps: { type: "string" }, "skip-partition": { type: "boolean" }, save: { type: "boolean" } },
);
const RECORDS = o.records === undefined ? 300_000 : intFlag("consumer.bench", "records", o.records, 1);
const REPS = o.reps === undefined ? 5 : intFlag("consumer.bench", "reps", o.reps, 1);
const SKIP_PARTITION = o["skip-partition"] === true;
const PC = { records: 10_000, keys: 1_000, concurrency: 100, unordered: 2.829, key: 2.056, partition: 22.221 };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = (): number => performance.now();
/** CPU seconds (user + system) this process used so far. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** One measured pass: wall-clock and CPU-time rates over the same window. */
interface Rate {
  wall: number;
  cpu: number;
}

function consumerFor(brokers: string, label: string): Consumer {
  return kafka(brokers).consumer({ groupId: unique(`bench-${label}`), maxWaitTimeInMs: 100 });
}

async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what}`);
    await sleep(2);
  }
}

/** Plain KafkaJS eachBatch: count every message; `autoCommit` false = no commits at all. */
async function plain(brokers: string, topic: string, n: number, autoCommit: boolean): Promise<Rate> {
  const consumer = consumerFor(brokers, "plain");
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
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
  return { wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0) };
}

/** The runner with a no-op handler. */
async function runner(brokers: string, topic: string, n: number, ordering: Ordering): Promise<Rate> {
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  const controller = new AbortController();
  const c = createKafkaJSConsumer({
    consumer: consumerFor(brokers, `runner-${ordering}`),
    topics: [topic],
    fromBeginning: true,
    ordering,
    signal: controller.signal,
    handler: () => {
      if (first === 0) (first = now()), (cpu0 = cpu());
      if (++count === n) (last = now()), (cpu1 = cpu());
    },
  });
  await c.start();
  await waitUntil(() => count >= n, 300_000, `runner: ${count}/${n}`);
  controller.abort();
  await c.done;
  return { wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0) };
}

/** PC's example: 10,000 records, random 0–5 ms, concurrency 100; seconds from first start to last finish. */
async function pcExample(brokers: string, topic: string, ordering: Ordering): Promise<{ seconds: number; wall: number }> {
  let count = 0, first = 0, last = 0;
  const controller = new AbortController();
  const t0 = now();
  const c = createKafkaJSConsumer({
    consumer: consumerFor(brokers, `pc-${ordering}`),
    topics: [topic],
    fromBeginning: true,
    ordering,
    concurrency: PC.concurrency,
    signal: controller.signal,
    handler: async () => {
      if (first === 0) first = now();
      await sleep(Math.random() * 5);
      if (++count === PC.records) last = now();
    },
  });
  await c.start();
  await waitUntil(() => count >= PC.records, 600_000, `pc example ${ordering}: ${count}`);
  controller.abort();
  await c.done;
  return { seconds: (last - first) / 1000, wall: (last - t0) / 1000 };
}

await withBroker(async (brokers) => {
  // (a) one topic for every throughput run
  const bigTopic = unique("bench-throughput");
  await createTopic(brokers, bigTopic, 3);
  const payload = "x".repeat(64);
  const t = now();
  for (let i = 0; i < RECORDS; i += 50_000) {
    const n = Math.min(50_000, RECORDS - i);
    await produce(brokers, bigTopic, Array.from({ length: n }, (_, j) => ({ value: `${i + j}:${payload}` })));
  }
  const ends = await endOffsets(brokers, bigTopic);
  console.error(`produced ${RECORDS} records (3 partitions: ${[...ends.values()].join("/")}) in ${((now() - t) / 1000).toFixed(1)} s`);

  const variants: Array<{ name: string; run: () => Promise<Rate> }> = [
    { name: "plain eachBatch, no commits", run: () => plain(brokers, bigTopic, RECORDS, false) },
    { name: "plain eachBatch, autoCommit", run: () => plain(brokers, bigTopic, RECORDS, true) },
    { name: "runner, unordered", run: () => runner(brokers, bigTopic, RECORDS, "unordered") },
    { name: "runner, key", run: () => runner(brokers, bigTopic, RECORDS, "key") },
    { name: "runner, partition", run: () => runner(brokers, bigTopic, RECORDS, "partition") },
  ];
  // One discarded pass of each code path, so no variant pays the JIT's and the broker's cold start.
  await plain(brokers, bigTopic, RECORDS, false);
  await runner(brokers, bigTopic, RECORDS, "key");
  const throughput: Record<string, Rate[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < REPS; r++) {
    // interleaved and rotated, so drift and position in the sequence hit every variant alike
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      const rate = await v.run();
      throughput[v.name].push(rate);
      console.error(
        `  rep ${r + 1}/${REPS} ${v.name}: ${Math.round(rate.wall).toLocaleString("en")} rec/s, ` +
          `${Math.round(rate.cpu).toLocaleString("en")} rec per CPU-s`,
      );
    }
  }
  const stat = (name: string, f: (xs: number[]) => number, k: keyof Rate): number => f(throughput[name].map((x) => x[k]));
  const best = (xs: number[]): number => Math.max(...xs);
  const BASE = "plain eachBatch, no commits";

  // (b) PC's example on one partition
  const pcTopic = unique("bench-pc");
  await createTopic(brokers, pcTopic, 1);
  await produce(brokers, pcTopic, Array.from({ length: PC.records }, (_, i) => ({ key: `k${i % PC.keys}`, value: `${i}` })));
  const pcReps = Math.max(1, REPS - 2);
  const pc: Record<string, Array<{ seconds: number; wall: number }>> = { unordered: [], key: [], partition: [] };
  for (let r = 0; r < pcReps; r++) {
    for (const ordering of ["unordered", "key"] as Ordering[]) {
      const res = await pcExample(brokers, pcTopic, ordering);
      pc[ordering].push(res);
      console.error(`  rep ${r + 1}/${pcReps} PC example ${ordering}: ${res.seconds.toFixed(3)} s`);
    }
  }
  if (!SKIP_PARTITION) {
    const res = await pcExample(brokers, pcTopic, "partition");
    pc.partition.push(res);
    console.error(`  PC example partition: ${res.seconds.toFixed(3)} s`);
  }

  const ratio = (name: string, f: (xs: number[]) => number, k: keyof Rate): number =>
    +(stat(name, f, k) / stat(BASE, f, k)).toFixed(3);
  const rows = variants.map(({ name }) => ({
    name,
    medianRecordsPerSec: Math.round(stat(name, median, "wall")),
    bestRecordsPerSec: Math.round(stat(name, best, "wall")),
    medianRecordsPerCpuSec: Math.round(stat(name, median, "cpu")),
    runs: throughput[name].map((x) => Math.round(x.wall)),
    runsPerCpuSec: throughput[name].map((x) => Math.round(x.cpu)),
    ratioToPlain: { medianWall: ratio(name, median, "wall"), bestWall: ratio(name, best, "wall"), medianCpu: ratio(name, median, "cpu") },
  }));
  const pcRows = (["unordered", "key", "partition"] as const).filter((o) => pc[o].length > 0).map((o) => ({
    ordering: o,
    medianSeconds: +median(pc[o].map((x) => x.seconds)).toFixed(3),
    runs: pc[o].map((x) => +x.seconds.toFixed(3)),
    medianWallSecondsFromStart: +median(pc[o].map((x) => x.wall)).toFixed(3),
    parallelConsumerSeconds: PC[o],
    target: o === "partition" ? null : 1.5,
  }));

  console.log(`\n(a) no-op handler, ${RECORDS.toLocaleString("en")} records, 3 partitions, ${REPS} reps`);
  console.log("| variant | records/s (median) | × plain | records/s (best) | × plain | records per CPU-s (median) | × plain |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const f = (x: number) => x.toLocaleString("en");
    console.log(
      `| ${r.name} | ${f(r.medianRecordsPerSec)} | ${r.ratioToPlain.medianWall.toFixed(2)} | ${f(r.bestRecordsPerSec)} | ` +
        `${r.ratioToPlain.bestWall.toFixed(2)} | ${f(r.medianRecordsPerCpuSec)} | ${r.ratioToPlain.medianCpu.toFixed(2)} |`,
    );
  }
  console.log(`\n(b) PC's example: 10,000 records, random 0–5 ms, concurrency 100, 1 partition, 1,000 keys`);
  console.log("| ordering | here (s, median) | runs | Parallel Consumer (s) | target |");
  console.log("|---|---:|---|---:|---|");
  for (const r of pcRows) {
    const ok = r.target === null ? "—" : r.medianSeconds <= r.target ? `≤ ${r.target} s ✓` : `≤ ${r.target} s ✗`;
    console.log(`| ${r.ordering} | ${r.medianSeconds.toFixed(3)} | ${r.runs.join(", ")} | ${r.parallelConsumerSeconds} | ${ok} |`);
  }

  const out = {
    date: new Date().toISOString(),
    runtime: `node ${process.version}`,
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30) },
    kafkajs: "2.2.4",
    throughput: {
      records: RECORDS,
      partitions: 3,
      reps: REPS,
      baseline: BASE,
      measured: "first delivered batch → last record; wall clock and this process's CPU time (user + system)",
      loadAverageAtEnd: os.loadavg().map((x) => +x.toFixed(2)),
      rows,
    },
    parallelConsumerExample: {
      records: PC.records,
      keys: PC.keys,
      concurrency: PC.concurrency,
      partitions: 1,
      work: "await sleep(Math.random() * 5)",
      measured: "first record started → last record finished",
      rows: pcRows,
    },
  };
  const results = join(dirname(fileURLToPath(import.meta.url)), "results");
  const dir = o.save ? results : join(results, "tmp");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "consumer.json"), JSON.stringify(out, null, 2) + "\n");
  console.log(`\nwrote bench/results/${o.save ? "" : "tmp/"}consumer.json${o.save ? "" : " (--save writes the committed one)"}`);
});
