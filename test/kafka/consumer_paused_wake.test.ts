/**
 * Real broker, KafkaJS: pauses of every partition do not put KafkaJS to sleep
 * (adapters/kafkajs/paused_wake.ts). KafkaJS sleeps `maxWaitTimeInMs` when
 * every partition it would fetch is paused, and a resume does not wake it; here that wait
 * is 6 s. The runner pauses the new partitions while it reads their committed offsets after
 * the join: the first record must come sooner than that wait. Then each fetch brings more
 * records of a partition than its high mark (150), so the whole assignment is paused again
 * and again (3,000 records a partition): asleep each time, KafkaJS would need minutes. Every
 * record must be handled within less than one such wait (each exactly once), with the
 * assignment paused, and committed.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`; uses
 * KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createKafkaJSConsumer, type PauseEvent } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, withBroker } from "../broker/broker.ts";
import { asObject, kafka, unique, waitFor } from "./helpers.ts";

const PARTITIONS = 2;
const RECORDS = 6_000;
/** KafkaJS's wait when every partition is paused: far longer than the whole test may take. */
const MAX_WAIT_MS = 6_000;

test("KafkaJS: every partition paused by backpressure, fetching goes on once one resumes (no maxWaitTimeInMs sleep)", { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("paused-hold");
    const groupId = unique("paused-hold-group");
    await createTopic(brokers, topic, PARTITIONS);
    // Many small sends: a fetch returns whole record batches, so small ones keep a fetch to a few of them.
    // Idempotent: a send retried on a topic whose leader is not ready yet is written once.
    const producer = kafka(brokers).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (let i = 0; i < RECORDS / PARTITIONS; i += 100) {
        await producer.sendBatch({
          acks: -1,
          topicMessages: [{
            topic,
            messages: Array.from({ length: PARTITIONS }, (_, p) => Array.from({ length: 100 }, (_, j) => ({ partition: p, value: `p${p}-${i + j}` }))).flat(),
          }],
        });
      }
    } finally {
      await producer.disconnect();
    }
    const ends = asObject(await endOffsets(brokers, topic));

    const handled = new Map<string, number>();
    const pauses: PauseEvent[] = [];
    const controller = new AbortController();
    const k = kafka(brokers);
    const consumer = createKafkaJSConsumer({
      kafka: k,
      // A fetch brings a few of the producer's 100-record batches per partition: past the high mark.
      consumer: k.consumer({ groupId, maxWaitTimeInMs: MAX_WAIT_MS, maxBytesPerPartition: 16 * 1024 }),
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 8,
      highWaterMark: 150,
      lowWaterMark: 50,
      signal: controller.signal,
      on: { pause: (e) => pauses.push(e) },
      handler: async (_m, { partition, offset }) => {
        await new Promise((r) => setTimeout(r, 0));
        const id = `${partition}@${offset}`;
        handled.set(id, (handled.get(id) ?? 0) + 1);
      },
    });
    try {
      await consumer.start(); // joined
      // The runner pauses new partitions while it reads their committed offsets: KafkaJS's
      // first fetch finds nothing to fetch, and asleep it would start MAX_WAIT_MS later.
      await waitFor(() => handled.size > 0, MAX_WAIT_MS * 3 / 4, "the first record");
      // From there every record is in a fetch or two of the broker: a second or so, unless
      // KafkaJS sleeps MAX_WAIT_MS after each pause of the whole assignment.
      await waitFor(() => handled.size === RECORDS, MAX_WAIT_MS * 3 / 4, `all ${RECORDS} records (${handled.size} so far, ${pauses.length} pauses)`);
      await waitFor(() => {
        const m = consumer.metrics();
        return m.partitions.length === PARTITIONS && m.partitions.every((p) => p.safe === Number(ends[p.partition]));
      }, 30_000, "safe = end on every partition");
    } finally {
      controller.abort();
      await consumer.done.catch(() => {});
    }
    assert.ok(pauses.length > 0, "backpressure paused partitions");
    assert.deepEqual([...handled.values()].filter((n) => n !== 1), [], "each record handled once");
    const committed = asObject(await committedOffsets(brokers, groupId, topic));
    assert.deepEqual(committed, ends, "committed = end");
  });
});
