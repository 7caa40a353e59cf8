/**
 * Real broker: ordering modes. 10,000 records with 1,000 keys over 3 partitions.
 * - `key`: per key, processing order equals offset order, at most one in flight per key;
 * - `partition`: per partition, processing order equals offset order, one at a time.
 * Both end with the committed offsets at the end offsets.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Ordering } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { type Binding, bindings } from "./bindings.ts";
import { asObject, sleep, unique, waitFor } from "./helpers.ts";

const RECORDS = 10_000;
const KEYS = 1_000;

interface Run {
  /** per "partition:key" (key mode) or "partition" (partition mode): offsets in the order their handler started */
  order: Map<string, number[]>;
  /** times a record started while another of the same key/partition was in flight */
  overlaps: number;
  processed: number;
  committed: Record<string, string>;
}

async function consumeAll(
  binding: Binding,
  brokers: string,
  topic: string,
  ordering: Ordering,
  work: () => Promise<void>,
): Promise<Run> {
  const groupId = unique(`ordering-${ordering}`);
  const order = new Map<string, number[]>();
  const busy = new Set<string>();
  let overlaps = 0, processed = 0;
  const controller = new AbortController();
  const consumer = binding.create({
    brokers,
    groupId,
    topics: [topic],
    fromBeginning: true,
    ordering,
    concurrency: 64,
    signal: controller.signal,
    handler: async (message, { partition, offset }) => {
      const unit = ordering === "key" ? `${partition}:${message.key!.toString()}` : String(partition);
      if (busy.has(unit)) overlaps++;
      busy.add(unit);
      const list = order.get(unit);
      if (list) list.push(offset);
      else order.set(unit, [offset]);
      await work();
      busy.delete(unit);
      processed++;
    },
  });
  await consumer.start();
  await waitFor(() => processed >= RECORDS, 120_000, `${RECORDS} records under ${ordering} ordering (got ${processed})`);
  controller.abort();
  await consumer.done;
  return { order, overlaps, processed, committed: asObject(await committedOffsets(brokers, groupId, topic)) };
}

const ascending = (xs: number[]): boolean => xs.every((x, i) => i === 0 || xs[i - 1] < x);

describe("ordering on a real broker", () => {
  for (const binding of bindings()) test(`key and partition ordering (${binding.name}), 10,000 records, 1,000 keys`, { timeout: 240_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("ordering");
      await createTopic(brokers, topic, 3);
      await produce(
        brokers,
        topic,
        Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % KEYS}`, value: `${i}` })),
      );
      const ends = asObject(await endOffsets(brokers, topic));

      // key: random 0–5 ms of work, so records of different keys overtake each other
      const byKey = await consumeAll(binding, brokers, topic, "key", () => sleep(Math.random() * 5));
      assert.equal(byKey.processed, RECORDS);
      assert.equal(byKey.order.size, KEYS, "1,000 keys (each lives in one partition)");
      assert.equal(byKey.overlaps, 0, "never two in-flight records of one key");
      for (const [unit, offsets] of byKey.order) {
        assert.equal(offsets.length, RECORDS / KEYS, `key ${unit}: every record once`);
        assert.ok(ascending(offsets), `key ${unit}: processed in offset order: ${offsets.join(",")}`);
      }
      assert.deepEqual(byKey.committed, ends);

      // partition: most records finish in a microtask, some sleep up to 2 ms
      const byPartition = await consumeAll(
        binding,
        brokers,
        topic,
        "partition",
        () => (Math.random() < 0.3 ? sleep(Math.random() * 2) : Promise.resolve()),
      );
      assert.equal(byPartition.processed, RECORDS);
      assert.equal(byPartition.overlaps, 0, "never two in-flight records of one partition");
      assert.equal(byPartition.order.size, 3);
      let n = 0;
      for (const [unit, offsets] of byPartition.order) {
        n += offsets.length;
        assert.ok(ascending(offsets), `partition ${unit}: processed in offset order`);
        assert.equal(offsets[0], 0);
        assert.equal(offsets.length, Number(ends[unit]), `partition ${unit}: every record once`);
      }
      assert.equal(n, RECORDS);
      assert.deepEqual(byPartition.committed, ends);
    });
  });
});
