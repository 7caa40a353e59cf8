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
import { asObject, consumerConfig, kafka, unique, waitFor } from "./helpers.ts";

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

for (const binding of bindings()) test(`dead letter across a handover (${binding.name}): a dead letter the commit's completed set carries is not produced again by the next owner`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("dlq-handover");
    const groupId = unique("dlq-handover-group");
    await createTopic(brokers, topic, 1);
    await createTopic(brokers, `${topic}.DLT`, 1);
    await produce(brokers, topic, Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const common = { brokers, groupId, topics: [topic], fromBeginning: true, ordering: "unordered" as const, concurrency: 8, deadLetter: true };

    // The first owner: v0 never finishes (it waits for its signal), v5 always fails and is
    // dead-lettered; the rest finish. A shutdown then commits offset 0 with the completed set.
    let ok1 = 0, dead1 = 0;
    const stop1 = new AbortController();
    const first = binding.create({
      ...common,
      retry: { retries: 1, initialDelayMs: 5, jitter: 0 },
      shutdownGraceMs: 300,
      signal: stop1.signal,
      on: { deadLetter: () => dead1++ },
      handler: async (message, { signal }) => {
        const v = message.value!.toString();
        if (v === "v0") return await new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
        if (v === "v5") throw new Error("poison");
        ok1++;
      },
    });
    await first.start();
    await waitFor(() => ok1 === 18 && dead1 === 1, 60_000, `18 processed and 1 dead letter (${ok1}, ${dead1})`);
    stop1.abort();
    await first.done;
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), { "0": "0" }, "v0 unfinished: the commit stays at 0");

    // The next owner redoes v0 only: v5's dead letter was acknowledged before the commit that carried it.
    const seen: string[] = [];
    let dead2 = 0;
    const stop2 = new AbortController();
    const second = binding.create({
      ...common,
      signal: stop2.signal,
      on: { deadLetter: () => dead2++ },
      handler: (message) => void seen.push(message.value!.toString()),
    });
    await second.start();
    await waitFor(() => seen.length >= 1, 60_000, "the next owner runs v0");
    await new Promise((r) => setTimeout(r, 500)); // a record it should not run would come in the same batch
    stop2.abort();
    await second.done;
    assert.deepEqual(seen, ["v0"], "only the unfinished record runs again");
    assert.equal(dead2, 0, "no dead letter produced again");
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), { "0": "20" });
    assert.deepEqual(asObject(await endOffsets(brokers, `${topic}.DLT`)), { "0": "1" }, "one dead letter in the DLT");
  });
});

// Issue 42: a missing dead-letter topic showed only as dead-letter errors, record after record,
// until the partition stopped. Through KafkaJS the start checks it where the admin client can
// tell (`kafka` given; subscribed topic names), as the platformatic binding always does
// (test/kafka/platformatic_traps.test.ts).
test("dead letter (kafkajs): a dead-letter topic that does not exist is refused at the start, naming it", { timeout: 60_000 }, async () => {
  const { createKafkaJSConsumer, ClusterRefusedError } = await import("../../adapters/kafkajs/mod.ts");
  await withBroker(async (brokers) => {
    const topic = unique("dlq-missing");
    await createTopic(brokers, topic, 1); // its dead-letter topic is not created
    const k = kafka(brokers);
    const consumer = createKafkaJSConsumer({
      kafka: k,
      consumer: k.consumer(consumerConfig(unique("dlq-missing-group"))),
      topics: [topic],
      deadLetter: { producer: k.producer() },
      handler: () => {},
      logger: false,
    });
    await assert.rejects(consumer.start(), (e: unknown) => {
      assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
      assert.equal(e.kind, "unknown-topic", e.message);
      assert.deepEqual(e.topics, [`${topic}.DLT`]);
      assert.match(e.message, /dead-letter topic ".*\.DLT" does not exist/);
      return true;
    });
    await assert.rejects(consumer.done, ClusterRefusedError);
  });
});
