/**
 * Real broker: retries, then dead letters. Records that always fail are retried with
 * backoff, then produced to `<topic>.DLT` with the error in headers; they count as
 * complete only once that produce is acknowledged, so the commit reaches the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts); the dead-letter topic
 * is read back with KafkaJS. Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEAD_LETTER_HEADERS, type RetryEvent } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, kafka, unique, waitFor } from "./helpers.ts";

for (const binding of bindings()) test(`dead letter (${binding.name}): failing records retried, then produced to <topic>.DLT with the error in headers`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("dlq");
    const groupId = unique("dlq-group");
    await createTopic(brokers, topic, 2);
    await createTopic(brokers, `${topic}.DLT`, 1);
    await produce(brokers, topic, Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));

    const poison = (value: string) => Number(value.slice(1)) % 100 === 7; // v7, v107, v207, v307
    const attempts = new Map<string, number>();
    const retries: RetryEvent[] = [];
    let ok = 0, dead = 0;
    const controller = new AbortController();
    const k = kafka(brokers);
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 16,
      retry: { retries: 2, initialDelayMs: 5, jitter: 0 },
      deadLetter: true,
      signal: controller.signal,
      on: { retry: (e) => retries.push(e), deadLetter: () => dead++ },
      handler: (message) => {
        const v = message.value!.toString();
        attempts.set(v, (attempts.get(v) ?? 0) + 1);
        if (poison(v)) throw new TypeError(`cannot process ${v}`);
        ok++;
      },
    });
    await consumer.start();
    await waitFor(() => ok === 396 && dead === 4, 60_000, `396 processed and 4 dead letters (${ok}, ${dead})`);
    controller.abort();
    await consumer.done;

    assert.equal(retries.length, 8, "two retries per poison record");
    for (const v of ["v7", "v107", "v207", "v307"]) assert.equal(attempts.get(v), 3, `${v}: 1 call + 2 retries`);
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends, "dead-lettered records count as complete");

    // read the dead-letter topic back
    const reader = k.consumer({ groupId: unique("dlq-reader"), maxWaitTimeInMs: 100 });
    const got: Array<{ value: string; headers: Record<string, string> }> = [];
    await reader.connect();
    await reader.subscribe({ topics: [`${topic}.DLT`], fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [h, v] of Object.entries(message.headers ?? {})) headers[h] = String(v);
        got.push({ value: message.value!.toString(), headers });
        return Promise.resolve();
      },
    });
    await waitFor(() => got.length >= 4, 30_000, "4 dead letters in the DLT");
    await reader.disconnect();
    assert.deepEqual(got.map((g) => g.value).sort(), ["v107", "v207", "v307", "v7"]);
    for (const g of got) {
      assert.equal(g.headers[DEAD_LETTER_HEADERS.topic], topic);
      assert.equal(g.headers[DEAD_LETTER_HEADERS.attempts], "3");
      assert.equal(g.headers[DEAD_LETTER_HEADERS.errorName], "TypeError");
      assert.match(g.headers[DEAD_LETTER_HEADERS.error], new RegExp(`cannot process ${g.value}`));
      assert.match(g.headers[DEAD_LETTER_HEADERS.offset], /^\d+$/);
    }
  });
});
