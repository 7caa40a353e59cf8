/**
 * Commit cadence of the bindings in steady state (no faults): how often each sends a
 * commit, how long the broker takes to acknowledge it, and how many finished records an
 * acknowledged commit does not cover yet, i.e. what a SIGKILL at a random moment would
 * make the next owner redo. Records finished above the safe position are covered by the
 * completed set of the next commit, so the gap counted is `safe − confirmed` per
 * partition, sampled every 20 ms.
 *
 * Workload: 30,000 records on 3 partitions, 500 keys, key ordering, concurrency 16, a
 * handler sleeping 0–3 ms, default commit options (eager). Each pass is a new group.
 *
 *     node scripts/with-broker.mjs -- node --import tsx bench/commit_cadence.ts [LIST]
 *
 * LIST: passes in order, of `kafkajs`, `confluent:consumer`, `confluent:eager`,
 * `confluent:cooperative` (default `kafkajs,confluent:consumer,confluent:eager`, twice).
 * Prints one line per pass.
 *
 * @module
 */
import process from "node:process";
import { bindings, type ConfluentProtocol } from "../test/kafka/bindings.ts";
import { kafka, unique } from "../test/kafka/helpers.ts";
import { usageError } from "./cli.ts";

const NAME = "commit_cadence";
const PASSES = ["kafkajs", "confluent:consumer", "confluent:eager", "confluent:cooperative"];
const brokers = process.env.KAFKA_BROKERS;
if (!brokers) usageError(NAME, "KAFKA_BROKERS is not set");
const list = (process.argv[2] ?? "kafkajs,confluent:consumer,confluent:eager,kafkajs,confluent:consumer,confluent:eager").split(",");
const bad = list.find((p) => !PASSES.includes(p));
if (bad !== undefined) usageError(NAME, `passes are ${PASSES.join(", ")}; got ${JSON.stringify(bad)}`);

const RECORDS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const k = kafka(brokers!);
const topic = unique("cadence");
const admin = k.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
await admin.disconnect();
const producer = k.producer();
await producer.connect();
for (let i = 0; i < RECORDS; i += 1_000) {
  await producer.send({ topic, messages: Array.from({ length: 1_000 }, (_, j) => ({ key: String((i + j) % 500), value: String(i + j) })) });
}
await producer.disconnect();

const quantile = (xs: number[], f: number): number => (xs.length ? Math.round(xs[Math.floor(f * (xs.length - 1))]) : NaN);
const mean = (xs: number[]): number => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));

for (const pass of list) {
  const [name, protocol] = pass.split(":");
  const binding = bindings().find((b) => b.name === name);
  if (!binding) usageError(NAME, `the ${name} binding cannot run here`);
  let finished = 0;
  const latencies: number[] = [];
  const c = binding!.create({
    brokers: brokers!,
    groupId: unique("cadence-g"),
    topics: [topic],
    fromBeginning: true,
    ordering: "key",
    concurrency: 16,
    ...(protocol !== undefined ? { protocol: protocol as ConfluentProtocol } : {}),
    handler: async (_m, { offset }) => {
      await sleep(offset % 4);
      finished++;
    },
    on: { commit: (e) => void latencies.push(e.latencyMs) },
  });
  await c.start();
  const behind: number[] = [];
  const t0 = Date.now();
  while (finished < RECORDS && Date.now() - t0 < 120_000) {
    await sleep(20);
    let n = 0;
    for (const p of c.metrics().partitions) n += Math.max(0, (p.safe ?? 0) - (p.confirmed ?? 0));
    if (finished > 0) behind.push(n);
  }
  const secs = (Date.now() - t0) / 1000;
  await c.shutdown();
  latencies.sort((a, b) => a - b);
  behind.sort((a, b) => a - b);
  console.log(
    `${pass}: ${finished} records in ${secs.toFixed(1)} s, ${latencies.length} commits (${(latencies.length / secs).toFixed(1)}/s), ` +
      `latency p50 ${quantile(latencies, 0.5)} p90 ${quantile(latencies, 0.9)} max ${quantile(latencies, 1)} ms; ` +
      `finished records not under an acknowledged commit: mean ${mean(behind)}, p50 ${quantile(behind, 0.5)}, p90 ${quantile(behind, 0.9)}`,
  );
}
process.exit(0);
