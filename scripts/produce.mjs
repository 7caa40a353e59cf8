#!/usr/bin/env node
// `npm run produce`: a few sample records for the quick starts.
//
//   npm run produce -- --topic orders [--count 20] [--keys 5] [--brokers 127.0.0.1:9092]
//
// Produces COUNT records to an existing topic (acks=all, idempotent, in order), keyed
// `customer-0` … `customer-(KEYS-1)` in turn, each value a JSON object such as
// {"order":7,"customer":"customer-2","amount":17}, and prints where they went. A topic that
// does not exist is an error (the project's broker does not create topics on first use).
import process from "node:process";
import { Kafka, logLevel } from "kafkajs";
import { tsImport } from "tsx/esm/api";
import { intFlag, parseCli, usageError } from "./cli.mjs";

const NAME = "produce";
const { values } = parseCli({
  name: NAME,
  usage: `usage: npm run produce -- --topic NAME [--count 20] [--keys 5] [--brokers 127.0.0.1:9092]
       (node scripts/produce.mjs [options])

Produces COUNT sample records to the existing topic NAME: keys customer-0 … customer-(KEYS-1)
in turn, values like {"order":7,"customer":"customer-2","amount":17}.

  --topic NAME         the topic (required; it must exist: npm run broker -- --topic NAME:3)
  --count N            records (default 20)
  --keys N             distinct keys (default 5)
  --brokers LIST       bootstrap brokers, comma separated (default 127.0.0.1:9092)
  -h, --help           this text`,
  options: {
    topic: { type: "string" },
    count: { type: "string", default: "20" },
    keys: { type: "string", default: "5" },
    brokers: { type: "string", default: "127.0.0.1:9092" },
  },
});
if (!values.topic) usageError(NAME, "--topic is required");
const topic = values.topic;
const count = intFlag(NAME, "count", values.count, 1, 10_000_000);
const keys = intFlag(NAME, "keys", values.keys, 1, 1_000_000);
const brokers = values.brokers;

const admin = new Kafka({
  clientId: "offset-frontier-produce",
  brokers: brokers.split(",").map((b) => b.trim()).filter(Boolean),
  logLevel: logLevel.NOTHING,
  retry: { retries: 2 },
}).admin();
try {
  await admin.connect();
  const names = await admin.listTopics();
  if (!names.includes(topic)) {
    console.error(`produce: no topic ${JSON.stringify(topic)} at ${brokers} (topics: ${names.filter((n) => !n.startsWith("__")).join(", ") || "none"}); create it first, e.g. npm run broker -- --topic ${topic}:3`);
    process.exit(1);
  }
} catch (e) {
  console.error(`produce: cannot reach Kafka at ${brokers}: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
} finally {
  await admin.disconnect().catch(() => {});
}

const { produce, endOffsets } = await tsImport("../test/broker/broker.ts", import.meta.url);
const t0 = performance.now();
const records = Array.from({ length: count }, (_, i) => {
  const customer = `customer-${i % keys}`;
  return { key: customer, value: JSON.stringify({ order: i, customer, amount: 10 + ((i * 7) % 90) }) };
});
await produce(brokers, topic, records);
const ends = await endOffsets(brokers, topic);
const where = [...ends].sort((a, b) => a[0] - b[0]).map(([p, end]) => `${p}: ${end}`).join(", ");
console.log(`produced ${count} records to ${topic} in ${((performance.now() - t0) / 1000).toFixed(1)} s; end offsets by partition: ${where}`);
