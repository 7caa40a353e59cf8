/**
 * Real broker: the batch handler. 300 keyed records under key ordering through
 * `batch: { maxRecords: 50 }`: batches of several records ran, a key was never in two
 * running batches, records failed by a per-record result (and only they) ran again, every
 * record succeeded once in offset order within its key, and the commits reach the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, sleep, unique, waitFor } from "./helpers.ts";

for (const binding of bindings()) test(`batch handler (${binding.name}): per-record results, a key never in two running batches, commits at the end`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("batch");
    const groupId = unique("batch-group");
    await createTopic(brokers, topic, 2);
    await produce(brokers, topic, Array.from({ length: 300 }, (_, i) => ({ key: `k${i % 30}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));

    const running = new Set<string>();
    const succeeded = new Map<string, number>();
    const attempts = new Map<string, number>();
    const order = new Map<string, number[]>();
    const sizes: number[] = [];
    let violation = "";
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 64,
      retry: { retries: 3, initialDelayMs: 5, jitter: 0 },
      signal: controller.signal,
      batch: {
        maxRecords: 50,
        maxWaitMs: 20,
        handler: async (messages, { records }) => {
          sizes.push(messages.length);
          const keys = messages.map((m, i) => `${records[i].partition}:${m.key!.toString()}`);
          for (const k of keys) {
            if (running.has(k)) violation ||= `key ${k} in two running batches or twice in one`;
            running.add(k);
          }
          await sleep(2);
          for (const k of keys) running.delete(k);
          return messages.map((m, i) => {
            const v = m.value!.toString();
            attempts.set(v, (attempts.get(v) ?? 0) + 1);
            if (Number(v.slice(1)) % 37 === 5 && records[i].attempt === 1) return new Error(`try ${v} again`);
            succeeded.set(v, (succeeded.get(v) ?? 0) + 1);
            (order.get(keys[i]) ?? order.set(keys[i], []).get(keys[i])!).push(records[i].offset);
            return undefined;
          });
        },
      },
    });
    await consumer.start();
    await waitFor(() => succeeded.size === 300, 60_000, `300 records (${succeeded.size})`);
    controller.abort();
    await consumer.done;

    assert.equal(violation, "");
    assert.ok(sizes.some((n) => n > 1), `batches of several records ran (${sizes.slice(0, 10)})`);
    assert.ok(sizes.every((n) => n <= 50));
    assert.ok([...succeeded.values()].every((n) => n === 1), "each record succeeded once");
    for (const [v, n] of attempts) assert.equal(n, Number(v.slice(1)) % 37 === 5 ? 2 : 1, `${v}: only failed records ran again`);
    for (const offsets of order.values()) assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b));
    assert.equal(consumer.metrics().completed, 300);
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
