/**
 * Smoke test of the real-broker helpers (test/broker/broker.ts): create a topic,
 * produce to it, read its end offsets. Uses KAFKA_BROKERS when set (see
 * scripts/with-broker.mjs), else starts and stops its own broker.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";

test("broker: 300 records into a 3-partition topic", { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    // Unique name: KAFKA_BROKERS may point at a broker other tests share.
    const topic = `broker-smoke-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    await createTopic(brokers, topic, 3);
    const messages = Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: `v${i}` }));
    await produce(brokers, topic, messages);

    const ends = await endOffsets(brokers, topic);
    assert.deepEqual([...ends.keys()].sort((a, b) => a - b), [0, 1, 2]);
    let total = 0;
    for (const end of ends.values()) total += Number(end);
    assert.equal(total, 300);
  });
});
