/**
 * Real broker: the batch handler in exactly-once mode (KafkaJS, the binding with
 * transactions). 600 keyed records on 3 partitions through `batch: { maxRecords: 64 }`:
 * each record sends one output through its own `records[i].send`; some records fail their
 * first attempt by a per-record result (only they run again), a few always fail and are
 * dead-lettered inside their transaction, and one transaction is refused by the broker (an
 * output over its `message.max.bytes`, once), which resets that partition alone. Read back
 * with `read_committed`: every input has exactly one output (or one dead letter), no failed
 * attempt's output and not the refused one were committed, and the group's committed offsets
 * are the end offsets.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createKafkaJSConsumer, DEAD_LETTER_HEADERS, type TransactionEvent } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { asObject, consumerConfig, kafka, sleep, total, unique, waitFor } from "./helpers.ts";
import { readCommitted } from "./read_committed.ts";

test("exactly-once batch handler: one committed output per input, failed records retried, dead letters in the transactions", { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("eos-batch");
    const groupId = unique("eos-batch-group");
    await createTopic(brokers, topic, 3);
    await createTopic(brokers, `${topic}.out`, 3);
    await createTopic(brokers, `${topic}.DLT`, 1);
    const N = 600;
    await produce(brokers, topic, Array.from({ length: N }, (_, i) => ({ key: `k${i % 37}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));
    const poison = (v: string) => Number(v.slice(1)) % 150 === 11; // 4 records
    const transient = (offset: number) => offset % 50 === 3; // fails its first attempt
    const events: TransactionEvent[] = [];
    const runs = new Map<string, { v: string; n: number }>();
    const sizes: number[] = [];
    let mixed = 0;
    let huge = false; // one output over the broker's 1 MiB message.max.bytes, once: its transaction is refused
    const controller = new AbortController();
    const k = kafka(brokers);
    const consumer = createKafkaJSConsumer({
      kafka: k,
      consumer: k.consumer(consumerConfig(groupId)),
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 64,
      retry: { retries: 1, initialDelayMs: 5, jitter: 0 },
      deadLetter: { producer: k.producer() },
      transactional: { timeoutMs: 15_000 },
      signal: controller.signal,
      on: { transaction: (e) => events.push(e) },
      batch: {
        maxRecords: 64,
        maxWaitMs: 20,
        handler: async (messages, { records }) => {
          sizes.push(messages.length);
          if (new Set(records.map((r) => r.partition)).size > 1) mixed++;
          const results = messages.map((message, i) => {
            const { partition, offset, attempt, send } = records[i];
            const v = message.value!.toString();
            runs.set(`${partition}:${offset}`, { v, n: (runs.get(`${partition}:${offset}`)?.n ?? 0) + 1 });
            const big = !huge && partition === 0 && offset >= 20 && !poison(v) && !transient(offset);
            if (big) huge = true;
            send!({ topic: `${topic}.out`, partition, key: message.key, value: big ? "x".repeat(1_500_000) : `${v}#${attempt}`, headers: { from: `${partition}:${offset}` } });
            return poison(v) || (transient(offset) && attempt === 1) ? new Error(`fails ${v}`) : undefined;
          });
          await sleep(2);
          return results;
        },
      },
    });
    await consumer.start();
    await waitFor(() => events.some((e) => e.outcome !== "committed"), 60_000, "the refused transaction");
    const want = total(await endOffsets(brokers, topic));
    const t0 = Date.now();
    while (total(await committedOffsets(brokers, groupId, topic)) < want) {
      if (Date.now() - t0 > 60_000) assert.fail(`the transactions did not commit every offset within 60 s: ${JSON.stringify(consumer.metrics().transactions)}`);
      await sleep(200);
    }
    const m = consumer.metrics().transactions!;
    controller.abort();
    await consumer.done;

    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
    assert.ok(sizes.some((n) => n > 1) && sizes.every((n) => n <= 64), `batches of several records, at most 64 (${sizes.slice(0, 12)})`);
    assert.ok(mixed > 0, "some batch held records of several partitions");
    assert.deepEqual(events.filter((e) => e.outcome !== "committed").map((e) => [e.partition, e.outcome]), [[0, "aborted"]], "one refused transaction, not fenced");
    assert.equal(m.resets, 1);
    assert.equal(m.waiting, 0, "the reset partition opened again");
    // Only the refused partition's records ran again besides the failed ones.
    for (const [from, { v, n }] of runs) {
      const [p, o] = from.split(":").map(Number);
      if (p === 0) continue;
      assert.equal(n, poison(v) || transient(o) ? 2 : 1, `${from} (${v}) ran ${n} times`);
    }

    const out = await readCommitted(brokers, `${topic}.out`);
    const byInput = new Map<string, string[]>();
    for (const r of out) byInput.set(r.headers.from, [...(byInput.get(r.headers.from) ?? []), r.value]);
    const letters = await readCommitted(brokers, `${topic}.DLT`);
    assert.equal(letters.length, 4, "one dead letter per poison record");
    const dead = new Set(letters.map((l) => `${l.headers[DEAD_LETTER_HEADERS.partition]}:${l.headers[DEAD_LETTER_HEADERS.offset]}`));
    assert.equal(dead.size, 4);
    assert.equal(byInput.size, N - 4, "inputs with an output");
    for (const [from, values] of byInput) {
      assert.equal(values.length, 1, `${from}: ${values.join(", ")}`);
      assert.ok(!dead.has(from), `${from} has an output and a dead letter`);
      if (transient(Number(from.split(":")[1]))) assert.ok(values[0].endsWith("#2"), `${from}: the failed first attempt's output was dropped (${values[0]})`);
    }
    assert.ok(out.every((r) => r.value.length < 100), "the refused transaction's huge output was never committed");
  });
});
