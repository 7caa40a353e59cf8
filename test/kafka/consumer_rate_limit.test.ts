/**
 * Real broker: `rateLimit`. 300 records through a limit of 100 handler starts a second
 * (burst 10): in no window of the run did more than burst + rate × t start (a count, not a
 * speed: a slow machine only starts fewer), records waiting for tokens paused fetching
 * at the high mark (backpressure reached the client), and the commits reach the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { PauseEvent } from "../../core/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, unique, waitFor } from "./helpers.ts";

for (const binding of bindings()) test(`rate limit (${binding.name}): handler starts keep to burst + rate × t; waiting records pause fetching`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("rate");
    const groupId = unique("rate-group");
    await createTopic(brokers, topic, 2);
    await produce(brokers, topic, Array.from({ length: 300 }, (_, i) => ({ key: `k${i % 7}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));

    const starts: number[] = [];
    const pauses: PauseEvent[] = [];
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 32,
      highWaterMark: 40,
      rateLimit: { perSecond: 100, burst: 10 },
      signal: controller.signal,
      on: { pause: (e) => pauses.push(e) },
      handler: () => {
        starts.push(Date.now());
      },
    });
    await consumer.start();
    await waitFor(() => consumer.metrics().completed === 300, 90_000, `300 records (${consumer.metrics().completed})`);
    controller.abort();
    await consumer.done;

    assert.equal(starts.length, 300);
    let worst = -Infinity;
    for (let i = 0; i < starts.length; i++) {
      for (let j = i; j < starts.length; j++) worst = Math.max(worst, j - i + 1 - (10 + 100 * (starts[j] - starts[i] + 1) / 1_000));
    }
    assert.ok(worst <= 1e-9, `more than burst + rate × t in some window (by ${worst})`);
    assert.ok(pauses.some((p) => p.reason === "high-water-mark"), "records waiting for tokens paused fetching");
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
