/**
 * The exactly-once mode against a real broker (`npm run bench:transactions`, i.e.
 * `node scripts/with-broker.mjs -- node --import tsx bench/transactions.bench.ts`).
 *
 * (a) A no-op transform producing one record per input, 3 partitions (default 50,000
 *     records), measured from the first handler call until every output is acknowledged
 *     AND every input offset committed (what makes the work durable in each mode):
 *     - exactly-once: `transactional`, the handler calls `send` (outputs go in the
 *       partition's transaction of the next commit cycle);
 *     - at-least-once, one send per record: the handler awaits `producer.send` of its
 *       output (acks -1) before it returns, as a handler must for at-least-once;
 *     - at-least-once, batched sends: the same, through a 1 ms linger that sends every
 *       output waiting then in one request (what a careful at-least-once handler does).
 *     The ratio is exactly-once over the faster at-least-once variant (aim ≥ 0.5).
 * (b) What the producers per partition cost: P transactional producers opened as the
 *     consumer opens them (connect + InitProducerId): init latency, TCP connections to
 *     the broker and heap/RSS per producer.
 *
 * Repetitions are interleaved and rotated; a discarded warm-up pass of each first.
 * Prints tables and writes bench/results/tmp/transactions.json (--save: bench/results/).
 * Options: --records N, --reps N, --producers P.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { Kafka, Producer } from "kafkajs";
import { createKafkaJSConsumer, KafkaJSTransactions } from "../adapters/kafkajs/mod.ts";
import { createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { cli, intFlag } from "./cli.ts";

const o = cli(
  "transactions.bench",
  `usage: npm run bench:transactions -- [options]
       (node scripts/with-broker.mjs -- node --import tsx bench/transactions.bench.ts [options])

Exactly-once vs at-least-once, a no-op transform producing one record per input on 3
partitions; and the cost of one transactional producer per partition.

  --records N          input records (default 50000)
  --reps N             repetitions (default 3)
  --producers P        producers opened in (b) (default 24)
  --cost-only          only (b)
  --save               write the committed bench/results/transactions.json instead
  -h, --help           this text`,
  { records: { type: "string" }, reps: { type: "string" }, producers: { type: "string" }, "cost-only": { type: "boolean" }, save: { type: "boolean" } },
);
const RECORDS = o.records === undefined ? 50_000 : intFlag("transactions.bench", "records", o.records, 1);
const REPS = o.reps === undefined ? 3 : intFlag("transactions.bench", "reps", o.reps, 1);
const PRODUCERS = o.producers === undefined ? 24 : intFlag("transactions.bench", "producers", o.producers, 1);
const COST_ONLY = o["cost-only"] === true;
const CONCURRENCY = 64;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = (): number => performance.now();

async function waitUntil(cond: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what()}`);
    await sleep(2);
  }
}

type Mode = "exactly-once" | "at-least-once, one send per record" | "at-least-once, batched sends";
const MODES: Mode[] = ["exactly-once", "at-least-once, one send per record", "at-least-once, batched sends"];

/** Sends every output waiting after a 1 ms linger in one request; resolves each when acknowledged. */
function batcher(producer: Producer, topic: string): (partition: number, value: Buffer | null) => Promise<void> {
  let waiting: Array<{ partition: number; value: Buffer | null; done: () => void; fail: (e: unknown) => void }> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = (): void => {
    timer = undefined;
    const batch = waiting;
    waiting = [];
    producer.send({ topic, acks: -1, messages: batch.map((b) => ({ partition: b.partition, value: b.value })) }).then(
      () => batch.forEach((b) => b.done()),
      (e: unknown) => batch.forEach((b) => b.fail(e)),
    );
  };
  return (partition, value) =>
    new Promise<void>((done, fail) => {
      waiting.push({ partition, value, done, fail });
      timer ??= setTimeout(flush, 1);
    });
}

/** One pass; records per second from the first handler call until outputs acknowledged and offsets committed. */
async function pass(k: Kafka, brokers: string, input: string, ends: Map<number, number>, mode: Mode): Promise<{ rate: number; transactions?: number }> {
  const out = unique("bench-tx-out");
  await createTopic(brokers, out, 3);
  const total = [...ends.values()].reduce((a, b) => a + b, 0);
  const committed = new Map<number, number>();
  const committedSum = (): number => [...committed.values()].reduce((a, b) => a + b, 0);
  let acked = 0, first = 0;
  const controller = new AbortController();
  const producer = mode === "exactly-once" ? undefined : k.producer({ allowAutoTopicCreation: false });
  await producer?.connect();
  const send = producer && mode === "at-least-once, batched sends" ? batcher(producer, out) : undefined;
  const c = createKafkaJSConsumer({
    kafka: k,
    consumer: k.consumer({ groupId: unique("bench-tx"), maxWaitTimeInMs: 100 }),
    topics: [input],
    fromBeginning: true,
    ordering: "unordered",
    concurrency: CONCURRENCY,
    signal: controller.signal,
    ...(mode === "exactly-once" ? { transactional: {} } : {}),
    on: mode === "exactly-once"
      ? { transaction: (e) => void (e.outcome === "committed" && (committed.set(e.partition, e.offset), (acked += e.records))) }
      : { commit: (e) => e.offsets.forEach((x) => committed.set(x.partition, x.offset)) },
    handler: async (message, ctx) => {
      if (first === 0) first = now();
      if (ctx.send) ctx.send({ topic: out, partition: ctx.partition, value: message.value });
      else if (send) {
        await send(ctx.partition, message.value);
        acked++;
      } else {
        await producer!.send({ topic: out, acks: -1, messages: [{ partition: ctx.partition, value: message.value }] });
        acked++;
      }
    },
  });
  await c.start();
  await waitUntil(() => acked >= total && committedSum() >= total, 600_000, () => `${mode}: ${acked} acked, ${committedSum()} committed of ${total}`);
  const seconds = (now() - first) / 1000;
  const transactions = c.metrics().transactions?.committed;
  controller.abort();
  await c.done;
  await producer?.disconnect();
  return { rate: total / seconds, ...(transactions !== undefined ? { transactions } : {}) };
}

/** Established TCP connections from this machine to `port` (Linux /proc; -1 elsewhere). */
function connectionsTo(port: number): number {
  try {
    let n = 0;
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      let text = "";
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n").slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length < 4) continue;
        const rem = f[2].split(":");
        if (parseInt(rem[rem.length - 1], 16) === port && f[3] === "01") n++;
      }
    }
    return n;
  } catch {
    return -1;
  }
}

/** (b) P producers opened the way the consumer opens them. */
async function producerCost(k: Kafka, brokers: string): Promise<Record<string, number>> {
  const topic = unique("bench-tx-cost");
  await createTopic(brokers, topic, PRODUCERS);
  const port = Number(brokers.split(",")[0].split(":").pop());
  const consumer = k.consumer({ groupId: unique("bench-tx-cost") });
  const tx = new KafkaJSTransactions(k, consumer, { groupId: unique("bench-tx-cost-group") });
  const ac = new AbortController();
  // Warm-up, not counted: the first InitProducerId on a fresh broker waits for the transaction log.
  const warm = unique("bench-tx-warm");
  await createTopic(brokers, warm, 1);
  await tx.open([{ topic: warm, partition: 0, kept: false }], ac.signal);
  await tx.release([{ topic: warm, partition: 0 }]);
  await sleep(500);
  (globalThis as { gc?: () => void }).gc?.();
  const conn0 = connectionsTo(port);
  const mem0 = process.memoryUsage();
  const opens: number[] = [];
  // One at a time (the consumer opens an assignment's partitions at once; this isolates each init).
  for (let p = 0; p < PRODUCERS; p++) {
    const t = now();
    await tx.open([{ topic, partition: p, kept: false }], ac.signal);
    opens.push(now() - t);
  }
  (globalThis as { gc?: () => void }).gc?.();
  const mem1 = process.memoryUsage();
  const conn1 = connectionsTo(port);
  const s = tx.stats();
  await tx.close();
  await sleep(1_000); // sockets close after disconnect() resolves
  const conn2 = connectionsTo(port);
  return {
    producers: PRODUCERS,
    lastInitMs: +(s.lastInitMs ?? 0).toFixed(1),
    openWithCommittedReadMsMedian: +median(opens).toFixed(1),
    openWithCommittedReadMsMax: +Math.max(...opens).toFixed(1),
    connectionsPerProducer: conn0 < 0 ? -1 : +((conn1 - conn0) / PRODUCERS).toFixed(2),
    connectionsLeftAfterClose: conn0 < 0 ? -1 : conn2 - conn0,
    heapKiBPerProducer: Math.round((mem1.heapUsed - mem0.heapUsed) / 1024 / PRODUCERS),
    rssKiBPerProducer: Math.round((mem1.rss - mem0.rss) / 1024 / PRODUCERS),
  };
}

await withBroker(async (brokers) => {
  const k = kafka(brokers);
  if (COST_ONLY) {
    console.log(`${PRODUCERS} transactional producers: ${JSON.stringify(await producerCost(k, brokers))}`);
    return;
  }
  const input = unique("bench-tx-in");
  await createTopic(brokers, input, 3);
  const payload = "x".repeat(64);
  for (let i = 0; i < RECORDS; i += 50_000) {
    const n = Math.min(50_000, RECORDS - i);
    await produce(brokers, input, Array.from({ length: n }, (_, j) => ({ value: `${i + j}:${payload}` })));
  }
  const ends = new Map([...(await endOffsets(brokers, input))].map(([p, e]) => [p, Number(e)]));
  console.error(`produced ${RECORDS} records (3 partitions: ${[...ends.values()].join("/")})`);
  for (const m of MODES) await pass(k, brokers, input, ends, m); // warm-up, discarded
  const runs: Record<Mode, number[]> = { "exactly-once": [], "at-least-once, one send per record": [], "at-least-once, batched sends": [] };
  const txCounts: number[] = [];
  for (let r = 0; r < REPS; r++) {
    for (let i = 0; i < MODES.length; i++) {
      const m = MODES[(i + r) % MODES.length];
      const res = await pass(k, brokers, input, ends, m);
      runs[m].push(res.rate);
      if (res.transactions !== undefined) txCounts.push(res.transactions);
      console.error(`  rep ${r + 1}/${REPS} ${m}: ${Math.round(res.rate).toLocaleString("en")} rec/s`);
    }
  }
  const cost = await producerCost(k, brokers);
  const eos = median(runs["exactly-once"]);
  const alo = Math.max(median(runs["at-least-once, one send per record"]), median(runs["at-least-once, batched sends"]));
  const rows = MODES.map((m) => ({ mode: m, medianRecordsPerSec: Math.round(median(runs[m])), runs: runs[m].map(Math.round) }));
  console.log(`\n(a) no-op transform, one output per input, ${RECORDS.toLocaleString("en")} records, 3 partitions, concurrency ${CONCURRENCY}, ${REPS} reps`);
  console.log("| mode | records/s (median) | runs |");
  console.log("|---|---:|---|");
  for (const r of rows) console.log(`| ${r.mode} | ${r.medianRecordsPerSec.toLocaleString("en")} | ${r.runs.map((x) => x.toLocaleString("en")).join(", ")} |`);
  console.log(`exactly-once / faster at-least-once: ${(eos / alo).toFixed(2)} (aim ≥ 0.5); transactions per pass (median): ${median(txCounts)}`);
  console.log(`\n(b) ${cost.producers} transactional producers: ${JSON.stringify(cost)}`);
  const outJson = {
    date: new Date().toISOString(),
    runtime: `node ${process.version}`,
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadAverageAtEnd: os.loadavg().map((x) => +x.toFixed(2)) },
    kafkajs: "2.2.4",
    records: RECORDS,
    partitions: 3,
    concurrency: CONCURRENCY,
    reps: REPS,
    measured: "first handler call → every output acknowledged and every input offset committed",
    rows,
    ratio: +(eos / alo).toFixed(3),
    transactionsPerPass: median(txCounts),
    producerCost: cost,
  };
  const results = join(dirname(fileURLToPath(import.meta.url)), "results");
  const dir = o.save ? results : join(results, "tmp");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "transactions.json"), JSON.stringify(outJson, null, 2) + "\n");
  console.log(`\nwrote bench/results/${o.save ? "" : "tmp/"}transactions.json`);
});
