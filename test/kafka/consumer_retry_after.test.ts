/**
 * Real broker: retry when the handler says. One record throws a RetryAfterError asking for
 * a minute (as a 429's Retry-After would); the rest of its partition, other keys, finish
 * meanwhile, and its partition's commit stops at it. At shutdown the waiting retry fires
 * within the grace (a drain brings retries forward), succeeds, and the commits reach the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RetryAfterError, type RetryEvent } from "../../core/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, unique, waitFor } from "./helpers.ts";

for (const binding of bindings()) test(`retry after (${binding.name}): a record asks for its next attempt in a minute; its partition's other keys go on`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("retry-after");
    const groupId = unique("retry-after-group");
    await createTopic(brokers, topic, 2);
    await produce(brokers, topic, Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));

    const retries: RetryEvent[] = [];
    const calls = new Map<string, number>();
    let ok = 0;
    let slow: { partition: number; offset: number } | undefined;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 8,
      retry: { retries: 3, maxDelayMs: 60_000 },
      shutdownGraceMs: 10_000,
      deadLetter: false,
      signal: controller.signal,
      on: { retry: (e) => retries.push(e) },
      handler: (message, { partition, offset, attempt }) => {
        const v = message.value!.toString();
        calls.set(v, (calls.get(v) ?? 0) + 1);
        if (v === "v5" && attempt === 1) {
          slow = { partition, offset };
          throw new RetryAfterError(60_000, { cause: new Error("HTTP 429") });
        }
        ok++;
      },
    });
    await consumer.start();
    await waitFor(() => ok === 199, 60_000, `the 199 other records finish while v5 waits (${ok})`);
    assert.equal(calls.get("v5"), 1, "v5 waits for its requested time");
    assert.deepEqual(retries.map((r) => [r.offset, r.delayMs, r.requested]), [[slow!.offset, 60_000, true]]);
    await waitFor(
      () => consumer.metrics().partitions.find((p) => p.partition === slow!.partition)?.confirmed === slow!.offset,
      30_000,
      "v5's partition committed up to v5",
    );
    controller.abort(); // the drain brings the retry forward within the grace
    await consumer.done;
    assert.equal(calls.get("v5"), 2);
    assert.equal(ok, 200);
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
