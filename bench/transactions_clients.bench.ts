/**
 * Exactly-once through each client binding that has a transactional port, side by side on
 * one broker and one runtime (`@platformatic/kafka` needs Node >= 22.22: run it with the
 * pinned Node 24, `.cache/node-24.*`, or on Bun or Deno):
 *
 *   node scripts/with-broker.mjs -- <node24> --expose-gc --import tsx bench/transactions_clients.bench.ts
 *
 * (a) the no-op transform of bench/transactions.bench.ts (one output per input, concurrency
 *     64) on P input partitions (`--partitions 3,30,300`: the same total records for each
 *     P), measured from the first handler call until every output is committed and every
 *     input offset with it, through KafkaJS and through platformatic (one producer per
 *     partition each: the binding refuses one per member); the passes of one P alternate (a discarded warm-up pass of each first); ratios over KafkaJS's
 *     median from the same run.
 * (b) the producers per partition: P partitions opened one at a time through each port
 *     (new producer, InitProducerId, committed read): latency per open, heap per producer.
 *
 * Options: --records N (default 50000), --reps N (default 3), --producers P (default 24),
 * --partitions list (default 3).
 * Prints a table; nothing is written.
 */
import process from "node:process";
import { Consumer } from "@platformatic/kafka";
import { createKafkaJSConsumer, KafkaJSTransactions } from "../adapters/kafkajs/mod.ts";
import { createPlatformaticConsumer, PlatformaticTransactions } from "../adapters/platformatic/mod.ts";
import type { ClientConsumer } from "../adapters/platformatic/types.ts";
import type { TransactionalPort } from "../core/consumer/port/transactions.ts";
import { createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { cli, intFlag } from "./cli.ts";

const o = cli(
  "transactions_clients.bench",
  `usage: node scripts/with-broker.mjs -- <node >= 22.22> --expose-gc --import tsx bench/transactions_clients.bench.ts [options]

Exactly-once through KafkaJS and through @platformatic/kafka, side by side.

  --records N          input records (default 50000)
  --reps N             repetitions (default 3)
  --producers P        producers opened in (b) (default 24)
  --partitions LIST    input partition counts of (a), comma-separated (default 3)
  -h, --help           this text`,
  { records: { type: "string" }, reps: { type: "string" }, producers: { type: "string" }, partitions: { type: "string" } },
);
const NAME = "transactions_clients.bench";
const RECORDS = o.records === undefined ? 50_000 : intFlag(NAME, "records", o.records, 1);
const REPS = o.reps === undefined ? 3 : intFlag(NAME, "reps", o.reps, 1);
const PRODUCERS = o.producers === undefined ? 24 : intFlag(NAME, "producers", o.producers, 1);
const PARTITIONS = (o.partitions ?? "3").split(",").map((x) => intFlag(NAME, "partitions", x.trim(), 1));
const CONCURRENCY = 64;
type Client = "kafkajs" | "platformatic";
const CLIENTS: Client[] = ["kafkajs", "platformatic"];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** One exactly-once pass through `client`: records per second. */
async function pass(brokers: string, input: string, partitions: number, total: number, client: Client): Promise<{ rate: number }> {
  const out = unique("bench-txc-out");
  await createTopic(brokers, out, partitions);
  const groupId = unique("bench-txc");
  const committed = new Map<number, number>();
  const committedSum = (): number => [...committed.values()].reduce((a, b) => a + b, 0);
  let acked = 0, first = 0;
  const controller = new AbortController();
  const common = {
    topics: [input],
    fromBeginning: true,
    ordering: "unordered" as const,
    concurrency: CONCURRENCY,
    signal: controller.signal,
    transactional: {},
    on: { transaction: (e: { outcome: string; partition: number; offset: number; records: number }) => void (e.outcome === "committed" && (committed.set(e.partition, e.offset), (acked += e.records))) },
    handler: (message: { value: unknown }, ctx: { partition: number; send?: (...r: Array<{ topic: string; partition: number; value: Uint8Array | null }>) => void }) => {
      if (first === 0) first = performance.now();
      ctx.send!({ topic: out, partition: ctx.partition, value: message.value as Uint8Array | null });
    },
  };
  const k = kafka(brokers);
  const c = client === "kafkajs"
    ? createKafkaJSConsumer({ ...common, kafka: k, consumer: k.consumer({ groupId, maxWaitTimeInMs: 100 }) } as never)
    : createPlatformaticConsumer({ ...common, maxWaitTime: 100, consumer: new Consumer({ groupId, clientId: groupId, bootstrapBrokers: brokers.split(",") }) } as never);
  await c.start();
  const t0 = Date.now();
  while (!(acked >= total && committedSum() >= total)) {
    if (Date.now() - t0 > 600_000) throw new Error(`${client}: ${acked} outputs, ${committedSum()} offsets committed of ${total}`);
    await sleep(2);
  }
  const seconds = (performance.now() - first) / 1000;
  controller.abort();
  await c.done;
  return { rate: total / seconds };
}

/** (b) P partitions opened one at a time through a port (one producer per partition each). */
async function openCost(brokers: string, client: "kafkajs" | "platformatic"): Promise<Record<string, number>> {
  const topic = unique(`bench-txc-cost-${client}`);
  await createTopic(brokers, topic, PRODUCERS);
  const groupId = unique("bench-txc-cost");
  let port: TransactionalPort & { stats(): { totalInitMs: number; created: number } };
  let done = async (): Promise<void> => {};
  if (client === "kafkajs") {
    const k = kafka(brokers);
    port = new KafkaJSTransactions(k, k.consumer({ groupId }), { groupId });
  } else {
    const consumer = new Consumer({ groupId, clientId: groupId, bootstrapBrokers: brokers.split(",") });
    port = new PlatformaticTransactions({ consumer: consumer as unknown as ClientConsumer, membership: () => undefined, seek: () => {}, fromBeginning: true });
    done = async () => void (await consumer.close(true).catch(() => {}));
  }
  const ac = new AbortController();
  // Warm-up, not counted.
  await port.open([{ topic, partition: 0, kept: false }], ac.signal);
  await port.release([{ topic, partition: 0 }]);
  await sleep(300);
  (globalThis as { gc?: () => void }).gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const opens: number[] = [];
  for (let p = 0; p < PRODUCERS; p++) {
    const t = performance.now();
    await port.open([{ topic, partition: p, kept: false }], ac.signal);
    opens.push(performance.now() - t);
  }
  (globalThis as { gc?: () => void }).gc?.();
  const heap1 = process.memoryUsage().heapUsed;
  await port.close();
  await done();
  return {
    openMsMedian: +median(opens).toFixed(1),
    openMsMax: +Math.max(...opens).toFixed(1),
    heapKiBPerProducer: Math.round((heap1 - heap0) / 1024 / PRODUCERS),
  };
}

await withBroker(async (brokers) => {
  const runtime = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" ? "bun" : typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : `node ${process.version}`;
  console.log(`(a) exactly-once, no-op transform, one output per input, ${RECORDS.toLocaleString("en")} records, concurrency ${CONCURRENCY}, ${REPS} reps, ${runtime}`);
  console.log("| partitions | client | records/s (median) | ÷ KafkaJS | runs |");
  console.log("|---:|---|---:|---:|---|");
  for (const partitions of PARTITIONS) {
    const input = unique("bench-txc-in");
    await createTopic(brokers, input, partitions);
    const payload = "x".repeat(64);
    for (let i = 0; i < RECORDS; i += 50_000) {
      const n = Math.min(50_000, RECORDS - i);
      await produce(brokers, input, Array.from({ length: n }, (_, j) => ({ key: `k${i + j}`, value: `${i + j}:${payload}` })));
    }
    const total = [...(await endOffsets(brokers, input)).values()].reduce((a, b) => a + Number(b), 0);
    for (const c of CLIENTS) await pass(brokers, input, partitions, total, c); // warm-up, discarded
    const runs: Record<Client, number[]> = { kafkajs: [], platformatic: [] };
    for (let r = 0; r < REPS; r++) {
      for (let i = 0; i < CLIENTS.length; i++) {
        const c = CLIENTS[(i + r) % CLIENTS.length];
        const res = await pass(brokers, input, partitions, total, c);
        runs[c].push(res.rate);
        console.error(`  P=${partitions} rep ${r + 1}/${REPS} ${c}: ${Math.round(res.rate).toLocaleString("en")} rec/s`);
      }
    }
    const base = median(runs.kafkajs);
    for (const c of CLIENTS) {
      console.log(
        `| ${partitions} | ${c} | ${Math.round(median(runs[c])).toLocaleString("en")} | ${(median(runs[c]) / base).toFixed(2)} | ` +
          `${runs[c].map((x) => Math.round(x).toLocaleString("en")).join(", ")} |`,
      );
    }
  }
  for (const c of ["kafkajs", "platformatic"] as const) console.log(`(b) ${c}, ${PRODUCERS} partitions opened one at a time: ${JSON.stringify(await openCost(brokers, c))}`);
});
