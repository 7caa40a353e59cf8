/**
 * Real broker: 20,000 records over 3 partitions, unordered, concurrency 64, handlers
 * sleeping a random 0–5 ms. Every record is processed exactly once (no faults, so no
 * duplicates) and the group's committed offsets equal the end offsets at the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, sleep, total, unique, waitFor } from "./helpers.ts";

const RECORDS = 20_000;

for (const binding of bindings()) test(`unordered (${binding.name}): 20,000 records, concurrency 64, each processed exactly once, commits reach the end`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("unordered");
    const groupId = unique("unordered-group");
    await createTopic(brokers, topic, 3);
    await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const ends = await endOffsets(brokers, topic);
    assert.equal(total(ends), RECORDS);

    const seen = new Map<string, number>(); // "partition:offset" → times processed
    const values = new Set<string>();
    let running = 0, maxRunning = 0, processed = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 64,
      signal: controller.signal,
      handler: async (message, { partition, offset }) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(Math.random() * 5);
        const id = `${partition}:${offset}`;
        seen.set(id, (seen.get(id) ?? 0) + 1);
        values.add(message.value!.toString());
        running--;
        processed++;
      },
    });
    const t0 = Date.now();
    await consumer.start();
    await waitFor(() => processed >= RECORDS, 120_000, `${RECORDS} records (got ${processed})`);
    const secs = (Date.now() - t0) / 1000;
    controller.abort();
    await consumer.done;

    assert.equal(processed, RECORDS, "no record processed twice");
    assert.equal(seen.size, RECORDS);
    assert.ok([...seen.values()].every((n) => n === 1));
    assert.equal(values.size, RECORDS, "every produced value arrived");
    assert.ok(maxRunning <= 64, `at most 64 handlers at once (saw ${maxRunning})`);
    assert.ok(maxRunning > 32, `the pool was used (saw ${maxRunning} at once)`);
    const committed = await committedOffsets(brokers, groupId, topic);
    assert.deepEqual(asObject(committed), asObject(ends), "committed offsets equal the end offsets");
    const m = consumer.metrics();
    assert.equal(m.completed, RECORDS);
    console.log(`# unordered (${binding.name}): ${RECORDS} records in ${secs.toFixed(2)} s, ${m.commits} commits, max ${maxRunning} running`);
  });
});
