/**
 * Real broker: the exactly-once mode. Each input record's handler sends one output; a
 * few records always fail and are dead-lettered inside their transaction. Read back with
 * `read_committed`: every input has exactly one output (or one dead letter), and the
 * group's committed offsets are the end offsets, with the completed sets written by the
 * same transactions.
 *
 * A transaction the broker refuses (an output over its `message.max.bytes`, once) resets its
 * partition, which opens again on the next answered heartbeat, without a rebalance (the
 * ownership gate: a reset makes its new producer only once the member knows it still owns
 * the partition), and every input still gets exactly one output.
 *
 * Through every binding of this runtime that has a transactional port (test/kafka/bindings.ts:
 * KafkaJS and `@platformatic/kafka`; Confluent's binding has none). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set, else
 * starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEAD_LETTER_HEADERS, type TransactionEvent } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindingsExcept } from "./bindings.ts";
import { asObject, unique, waitFor } from "./helpers.ts";
import { readCommitted } from "./read_committed.ts";

// Confluent's binding has no transactional port (exactly-once runs through KafkaJS and @platformatic/kafka).
for (const binding of bindingsExcept("confluent")) test(`exactly-once (${binding.name}): one committed output per input, dead letters in the same transactions`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("eos");
    const groupId = unique("eos-group");
    await createTopic(brokers, topic, 3);
    await createTopic(brokers, `${topic}.out`, 3);
    await createTopic(brokers, `${topic}.DLT`, 1);
    const N = 600;
    await produce(brokers, topic, Array.from({ length: N }, (_, i) => ({ key: `k${i % 37}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));
    const poison = (v: string) => Number(v.slice(1)) % 150 === 11; // 4 records
    const events: TransactionEvent[] = [];
    let attempts = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 32,
      retry: { retries: 1, initialDelayMs: 5, jitter: 0 },
      deadLetter: true,
      transactional: { timeoutMs: 15_000 },
      signal: controller.signal,
      on: { transaction: (e) => events.push(e) },
      handler: async (message, { partition, offset, send, attempt }) => {
        attempts++;
        const v = message.value!.toString();
        send!({ topic: `${topic}.out`, partition, key: message.key, value: `${v}#${attempt}`, headers: { from: `${partition}:${offset}` } });
        await new Promise((r) => setTimeout(r, offset % 3)); // out of order
        if (poison(v) || (offset % 50 === 3 && attempt === 1)) throw new Error(`fails ${v}`);
      },
    });
    await consumer.start();
    await waitFor(() => consumer.metrics().completed === N, 60_000, `${N} completed (${consumer.metrics().completed})`);
    const total = (m: Map<number, string>) => [...m.values()].reduce((n, v) => n + Number(v), 0);
    const want = total(await endOffsets(brokers, topic));
    const t0 = Date.now();
    while (total(await committedOffsets(brokers, groupId, topic)) < want) {
      if (Date.now() - t0 > 30_000) assert.fail("the transactions did not commit every offset within 30 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    const m = consumer.metrics().transactions!;
    controller.abort();
    await consumer.done;

    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
    assert.ok(m.committed > 0 && m.committed === events.filter((e) => e.outcome === "committed").length, `metrics ${JSON.stringify(m)}`);
    assert.equal(m.aborted + m.fenced, 0, "no failed transaction on a healthy broker");
    assert.ok(attempts > N, "failed attempts ran again");

    const out = await readCommitted(brokers, `${topic}.out`);
    const byInput = new Map<string, string[]>();
    for (const r of out) byInput.set(r.headers.from, [...(byInput.get(r.headers.from) ?? []), r.value]);
    const letters = await readCommitted(brokers, `${topic}.DLT`);
    assert.equal(letters.length, 4, "one dead letter per poison record");
    const dead = new Set(letters.map((l) => `${l.headers[DEAD_LETTER_HEADERS.partition]}:${l.headers[DEAD_LETTER_HEADERS.offset]}`));
    assert.equal(dead.size, 4);
    // Every other input: exactly one output, from its successful attempt (a failed attempt's send is dropped).
    assert.equal(byInput.size, N - 4, "inputs with an output");
    for (const [from, values] of byInput) {
      assert.equal(values.length, 1, `${from}: ${values.join(", ")}`);
      assert.ok(!dead.has(from), `${from} has an output and a dead letter`);
    }
    assert.equal(out.filter((r) => r.value.endsWith("#1")).length, N - 4 - out.filter((r) => r.value.endsWith("#2")).length);
  });
});

for (const binding of bindingsExcept("confluent")) test(`exactly-once (${binding.name}): a refused transaction's partition opens again on the next heartbeat, without a rebalance`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("eos-reset");
    const groupId = unique("eos-reset-group");
    await createTopic(brokers, topic, 2);
    await createTopic(brokers, `${topic}.out`, 2);
    const N = 200;
    await produce(brokers, topic, Array.from({ length: N }, (_, i) => ({ key: `k${i % 13}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));
    const events: TransactionEvent[] = [];
    let huge = false; // one output over the broker's 1 MiB message.max.bytes, once: its transaction is refused
    let joins = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      onAssignment: () => void joins++, // every assignment: a join
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 16,
      transactional: { timeoutMs: 15_000 },
      signal: controller.signal,
      on: { transaction: (e) => events.push(e) },
      handler: (message, { partition, offset, send }) => {
        const v = message.value!.toString();
        const big = !huge && partition === 0 && offset >= 20;
        if (big) huge = true;
        send!({ topic: `${topic}.out`, partition, key: message.key, value: big ? "x".repeat(1_500_000) : v, headers: { from: `${partition}:${offset}` } });
      },
    });
    await consumer.start();
    await waitFor(() => events.some((e) => e.outcome !== "committed"), 60_000, "the refused transaction");
    const total = (m: Map<number, string>) => [...m.values()].reduce((n, v) => n + Number(v), 0);
    const want = total(await endOffsets(brokers, topic));
    const t0 = Date.now();
    while (total(await committedOffsets(brokers, groupId, topic)) < want) {
      if (Date.now() - t0 > 60_000) assert.fail(`the transactions did not commit every offset within 60 s: ${JSON.stringify(consumer.metrics().transactions)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const m = consumer.metrics().transactions!;
    controller.abort();
    await consumer.done;

    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
    assert.deepEqual(events.filter((e) => e.outcome !== "committed").map((e) => [e.partition, e.outcome]), [[0, "aborted"]], "one refused transaction, not fenced");
    assert.equal(m.resets, 1);
    assert.equal(m.waiting, 0, "the reset partition opened again");
    assert.equal(joins, 1, "opened again on a heartbeat: no rebalance, no rejoin");
    const out = await readCommitted(brokers, `${topic}.out`);
    const byInput = new Map<string, number>();
    for (const r of out) byInput.set(r.headers.from, (byInput.get(r.headers.from) ?? 0) + 1);
    assert.equal(byInput.size, N, "every input has an output");
    for (const [from, n] of byInput) assert.equal(n, 1, `${from}: ${n} outputs`);
    assert.ok(out.every((r) => r.value.length < 100), "the refused transaction's huge output was never committed");
  });
});

for (const binding of bindingsExcept("confluent")) test(`exactly-once (${binding.name}): the completed set committed in a transaction is read back by the next member: no output twice`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("eos-claim");
    const groupId = unique("eos-claim-group");
    await createTopic(brokers, topic, 1);
    await createTopic(brokers, `${topic}.out`, 1);
    const N = 60;
    const HEAD = 5; // never finishes in the first member: its safe position stays there
    await produce(brokers, topic, Array.from({ length: N }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));
    const run = (ran: number[], stuck: boolean) => {
      const controller = new AbortController();
      const consumer = binding.create({
        brokers,
        groupId,
        topics: [topic],
        fromBeginning: true,
        ordering: "unordered",
        concurrency: 100,
        shutdownGraceMs: 500,
        transactional: { timeoutMs: 15_000 },
        signal: controller.signal,
        handler: async (message, { partition, offset, send, signal }) => {
          ran.push(offset);
          send!({ topic: `${topic}.out`, partition, key: message.key, value: message.value, headers: { from: `${partition}:${offset}` } });
          if (stuck && offset === HEAD) {
            await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
            throw new Error("stopped");
          }
        },
      });
      return { consumer, controller };
    };
    const first: number[] = [];
    const a = run(first, true);
    await a.consumer.start();
    // Every output but the head's committed: the transactions carried offset HEAD and a completed set past it.
    await waitFor(() => (a.consumer.metrics().transactions?.records ?? 0) >= N - 1, 60_000, `${N - 1} outputs committed (${JSON.stringify(a.consumer.metrics().transactions)})`);
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), { 0: String(HEAD) });
    a.controller.abort();
    await a.consumer.done;

    const second: number[] = [];
    const b = run(second, false);
    await b.consumer.start();
    const t0 = Date.now();
    while (asObject(await committedOffsets(brokers, groupId, topic))[0] !== ends[0]) {
      if (Date.now() - t0 > 60_000) assert.fail(`the second member did not commit the end within 60 s: ${JSON.stringify(b.consumer.metrics().transactions)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    b.controller.abort();
    await b.consumer.done;

    // The completed set came back with the offset: only the head ran again.
    assert.deepEqual(second, [HEAD], `the second member ran ${second.join(", ")}`);
    const out = await readCommitted(brokers, `${topic}.out`);
    const byInput = new Map<string, number>();
    for (const r of out) byInput.set(r.headers.from, (byInput.get(r.headers.from) ?? 0) + 1);
    assert.equal(byInput.size, N, "every input has an output");
    for (const [from, n] of byInput) assert.equal(n, 1, `${from}: ${n} outputs`);
  });
});
