/**
 * Real broker, @platformatic/kafka binding: `read_committed` by Kafka's own rule. Two
 * transactional producers interleave in one partition (A begins, B begins, B aborts, A
 * writes again, A aborts), A aborts a second transaction, then plain records follow. The
 * broker lists the aborted transactions in the order they ended (B before A): a reader
 * that assumes they are sorted by first offset (KafkaJS) lets A's first records through,
 * and one that keeps a single range per producer (the client's own filter) lets A's first
 * transaction through when both of A's are in one fetch. Through the binding only the
 * plain records reach the handler, and the commit passes the transaction markers (the
 * committed offset is the end offset). The transactions are written with KafkaJS.
 *
 * Runs on Bun, Deno and Node >= 22.22 (the client crashes on Node 20; scripts/run-kafka-tests.mjs
 * runs it there on Node 24); uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, kafka, unique, waitFor } from "./helpers.ts";

for (const binding of bindings().filter((b) => b.name === "platformatic")) {
  test(`read_committed (${binding.name}): interleaved aborted transactions, and two of one producer, stay invisible`, { timeout: 120_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("platformatic-aborted");
      const groupId = unique("platformatic-aborted-group");
      await createTopic(brokers, topic, 1);
      const k = kafka(brokers);
      const a = k.producer({ transactionalId: unique("txn-a"), idempotent: true, maxInFlightRequests: 1 });
      const b = k.producer({ transactionalId: unique("txn-b"), idempotent: true, maxInFlightRequests: 1 });
      await a.connect();
      await b.connect();
      try {
        const ta = await a.transaction();
        await ta.send({ topic, messages: [{ partition: 0, value: "a1" }, { partition: 0, value: "a2" }] });
        const tb = await b.transaction();
        await tb.send({ topic, messages: [{ partition: 0, value: "b1" }, { partition: 0, value: "b2" }] });
        await tb.abort();
        await ta.send({ topic, messages: [{ partition: 0, value: "a3" }] });
        await ta.abort();
        const ta2 = await a.transaction();
        await ta2.send({ topic, messages: [{ partition: 0, value: "a4" }] });
        await ta2.abort();
      } finally {
        await a.disconnect();
        await b.disconnect();
      }
      await produce(brokers, topic, [{ value: "ok1" }, { value: "ok2" }, { value: "ok3" }]);
      const ends = asObject(await endOffsets(brokers, topic));

      const seen: string[] = [];
      const controller = new AbortController();
      const consumer = binding.create({
        brokers,
        groupId,
        topics: [topic],
        fromBeginning: true,
        ordering: "partition",
        signal: controller.signal,
        handler: (message) => void seen.push(message.value!.toString()),
      });
      await consumer.start();
      await waitFor(() => seen.length >= 3, 60_000, `the three plain records (${seen.join(",")})`);
      let committed: Record<string, string> = {};
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        committed = asObject(await committedOffsets(brokers, groupId, topic));
        if (JSON.stringify(committed) === JSON.stringify(ends)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      controller.abort();
      await consumer.done;
      assert.deepEqual(seen, ["ok1", "ok2", "ok3"], "no record of an aborted transaction reached the handler");
      assert.deepEqual(committed, ends, "the commit passes the transaction markers");
    });
  });
}
