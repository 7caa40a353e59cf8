/**
 * Reads a topic back as a `read_committed` consumer sees it (not a test file): first a
 * sentinel record is produced (without a transaction) to every partition, then the topic
 * is read from the beginning until each partition's sentinel arrived. Counting against
 * end offsets would not work: transaction markers and aborted records take offsets that
 * a `read_committed` reader never sees, and a transaction still open holds the reader at
 * its first offset (until it is committed, aborted, fenced or times out).
 */
import { Kafka, logLevel } from "kafkajs";
import { installReadCommitted } from "../../adapters/kafkajs/read_committed.ts";

// KafkaJS's own filter leaks records of interleaved aborted transactions: read by Kafka's rule.
const corrected = installReadCommitted();
if (corrected !== "yes") throw new Error(`readCommitted: ${corrected}`);

/** A record read back. */
export interface CommittedRecord {
  partition: number;
  offset: number;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** The key of the sentinel records {@link readCommitted} produces (a later reader of the topic skips them). */
export const SENTINEL_KEY = "offset-frontier-read-committed-sentinel";

/** Every committed record of `topic` (sentinels excluded), partition by partition in offset order. */
export async function readCommitted(brokers: string, topic: string, timeoutMs = 120_000): Promise<CommittedRecord[]> {
  const kafka = new Kafka({ clientId: "read-committed", brokers: brokers.split(","), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  let partitions: number[];
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    partitions = meta.topics[0].partitions.map((p) => p.partitionId);
  } finally {
    await admin.disconnect();
  }
  const stamp = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: partitions.map((partition) => ({ partition, key: SENTINEL_KEY, value: stamp })) });
  } finally {
    await producer.disconnect();
  }
  const consumer = kafka.consumer({ groupId: `read-committed-${stamp}`, maxWaitTimeInMs: 100, readUncommitted: false });
  const out: CommittedRecord[] = [];
  const waiting = new Set(partitions);
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    await consumer.run({
      eachBatch: ({ batch }) => {
        for (const m of batch.messages) {
          const key = m.key?.toString() ?? "";
          const value = m.value?.toString() ?? "";
          if (key === SENTINEL_KEY) {
            if (value === stamp) waiting.delete(batch.partition);
            continue;
          }
          if (!waiting.has(batch.partition)) continue; // past our sentinel
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = String(v);
          out.push({ partition: batch.partition, offset: Number(m.offset), key, value, headers });
        }
        if (waiting.size === 0) done();
        return Promise.resolve();
      },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs)));
    const r = await Promise.race([all.then(() => "ok" as const), expired]);
    clearTimeout(timer);
    if (r === "timeout") throw new Error(`read_committed of ${topic}: partitions ${[...waiting].join(",")} not read to their sentinel within ${timeoutMs} ms`);
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  return out;
}
