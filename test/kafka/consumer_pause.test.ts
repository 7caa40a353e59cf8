/**
 * Real broker: consumer.pause() / resume(). While paused, records produced meanwhile start
 * no handler, metrics() shows the pause, and the member keeps its assignment (no
 * rebalance: the group membership stays); after resume() they all run once and the
 * commits reach the end.
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

for (const binding of bindings()) test(`pause and resume (${binding.name}): a paused consumer starts no handler and stays in its group`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("pause");
    const groupId = unique("pause-group");
    await createTopic(brokers, topic, 2);
    await produce(brokers, topic, Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: `a${i}` })));

    const seen = new Map<string, number>();
    const assignments: number[][] = [];
    let started = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      concurrency: 8,
      signal: controller.signal,
      onAssignment: (p) => assignments.push(p),
      handler: async (message) => {
        started++;
        await sleep(1);
        const v = message.value!.toString();
        seen.set(v, (seen.get(v) ?? 0) + 1);
      },
    });
    await consumer.start();
    await waitFor(() => seen.size === 100, 60_000, `the first 100 records (${seen.size})`);
    const assignedBefore = assignments.length;

    consumer.pause();
    const m = consumer.metrics();
    assert.equal(m.pausedByUser, true);
    assert.ok(m.partitions.length === 2 && m.partitions.every((p) => p.pausedByUser), "every partition shows the pause");
    const startedAtPause = started;
    await produce(brokers, topic, Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: `b${i}` })));
    await sleep(3_000); // long enough for several fetches had the consumer not been paused
    assert.equal(started, startedAtPause, "no handler started while paused");
    assert.equal(assignments.length, assignedBefore, "no rebalance: the member kept its partitions");
    assert.equal(consumer.metrics().partitions.length, 2);

    consumer.resume();
    assert.equal(consumer.metrics().pausedByUser, false);
    await waitFor(() => seen.size === 200, 60_000, `all 200 records after resume (${seen.size})`);
    const ends = asObject(await endOffsets(brokers, topic));
    await waitFor(() => consumer.metrics().partitions.every((p) => String(p.confirmed) === ends[String(p.partition)]), 30_000, "committed to the end");
    controller.abort();
    await consumer.done;
    assert.ok([...seen.values()].every((n) => n === 1), "each record ran once");
    assert.equal(assignments.length, assignedBefore, "still no rebalance");
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
