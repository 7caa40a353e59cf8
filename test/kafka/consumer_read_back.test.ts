/**
 * Real broker, KafkaJS given only its consumer (no `kafka` option, as the docs show it):
 * the completed sets it commits are read back by the next owner (issue 42).
 *
 * Member A (`createKafkaJSConsumer({ consumer, topics, handler })`) finishes a partition's
 * records out of order, two held (the head and one in the middle), and shuts down: its
 * last commit is the head's offset with the completed set in the metadata. Member B, made
 * the same way in the same group, must run exactly the two unfinished records, skip every
 * finished one (its `claim` event verifies the set) and commit the end. Before the binding
 * read committed offsets through the consumer's own connection, B (without `kafka`) read
 * nothing back and ran all the records again.
 *
 * A consumer of a second KafkaJS copy (one offset-frontier does not resolve as `kafkajs`, so
 * its consumer group is not reached): without `kafka` its first join fails it with an
 * `InvalidArgumentError` naming `kafka`; with `kafka` the same handover holds, read through
 * that client's admin.
 *
 * Then the same through a rebalance: A holds one record in each of two partitions, B joins
 * while A runs, A's revoke commits its completed sets, and whichever partition B is given
 * runs again only its held record.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`; uses
 * KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { type Consumer, Kafka } from "kafkajs";
import { createKafkaJSConsumer } from "../../adapters/kafkajs/mod.ts";
import { type ClaimEvent, InvalidArgumentError } from "../../core/mod.ts";
import { committedOffsets, createTopic, produce, withBroker } from "../broker/broker.ts";
import { consumerConfig, kafka, runtime, sleep, unique, waitFor } from "./helpers.ts";

const RECORDS = 20;
const HELD = [0, 7]; // never finished by A

/** How a member of the handover is made: its KafkaJS consumer, and `kafka` when given. */
interface Maker {
  consumer(groupId: string): Consumer;
  kafka?: Kafka;
}

/**
 * A finishes every record but {@link HELD} and shuts down; B, made the same way in the same
 * group, must run exactly the held records and verify A's completed set.
 */
async function handOver(brokers: string, make: Maker, name: string): Promise<void> {
  const topic = unique(name);
  const groupId = unique(`${name}-group`);
  await createTopic(brokers, topic, 1);
  await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i}`, value: `${i}` })));
  const withKafka = make.kafka === undefined ? {} : { kafka: make.kafka };

  const finishedByA = new Set<number>();
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const controllerA = new AbortController();
  const controllerB = new AbortController();
  const a = createKafkaJSConsumer({
    ...withKafka,
    consumer: make.consumer(groupId),
    topics: [topic],
    fromBeginning: true,
    ordering: "unordered",
    concurrency: 32,
    shutdownGraceMs: 300, // the held records stay unfinished
    signal: controllerA.signal,
    handler: async (_m, { offset }) => {
      if (HELD.includes(offset)) return await gate;
      finishedByA.add(offset);
    },
  });
  const ending: Array<Promise<void>> = [a.done];
  try {
    await a.start();
    await waitFor(() => finishedByA.size === RECORDS - HELD.length, 60_000, `A finishing ${RECORDS - HELD.length} records`);
    controllerA.abort();
    await a.done;
    release();
    assert.equal((await committedOffsets(brokers, groupId, topic)).get(0), String(HELD[0]), "A committed the held head's offset");

    const ranByB: number[] = [];
    const claims: ClaimEvent[] = [];
    const b = createKafkaJSConsumer({
      ...withKafka,
      consumer: make.consumer(groupId),
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 32,
      signal: controllerB.signal,
      handler: (_m, { offset }) => void ranByB.push(offset),
      on: { claim: (c) => void claims.push(c) },
    });
    ending.push(b.done);
    await b.start();
    await waitFor(() => ranByB.length >= HELD.length, 60_000, "B running the unfinished records");
    await waitFor(() => b.metrics().skipped >= RECORDS - HELD.length || ranByB.length > HELD.length, 30_000, "B skipping the finished records");
    await sleep(300); // a record run twice would show up here
    controllerB.abort();
    await b.done;

    assert.deepEqual([...ranByB].sort((x, y) => x - y), HELD, "B ran exactly the records A left unfinished");
    assert.deepEqual(claims.map((c) => ({ partition: c.partition, offset: c.offset, finished: c.finished, ignored: c.ignored })), [
      { partition: 0, offset: HELD[0], finished: RECORDS - HELD.length, ignored: undefined },
    ], "B verified A's completed set");
    assert.equal(b.metrics().skipped, RECORDS - HELD.length, "and skipped the finished ones");
    assert.equal((await committedOffsets(brokers, groupId, topic)).get(0), String(RECORDS), "B committed the end");
  } finally {
    // A failed assertion leaves nothing running (a held record would keep the process alive).
    release();
    controllerA.abort();
    controllerB.abort();
    await Promise.allSettled(ending);
  }
}

test(`KafkaJS without kafka: the next owner reads the completed set back and runs only the unfinished records (${runtime()})`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const k = kafka(brokers);
    await handOver(brokers, { consumer: (groupId) => k.consumer(consumerConfig(groupId)) }, "read-back");
  });
});

test(`a second KafkaJS copy: without kafka the first join fails the consumer naming kafka; with it the completed set is read back through its admin client (${runtime()})`, { timeout: 180_000 }, async () => {
  // A copy of KafkaJS that offset-frontier does not resolve as "kafkajs": its ConsumerGroup is not wrapped.
  const dir = mkdtempSync(join(tmpdir(), "offset-frontier-kafkajs-copy-"));
  try {
    const original = dirname(createRequire(import.meta.url).resolve("kafkajs/package.json"));
    cpSync(original, join(dir, "node_modules", "kafkajs"), { recursive: true });
    const copy = createRequire(join(dir, "here.js"))("kafkajs") as typeof import("kafkajs");
    assert.notEqual(copy.Kafka, Kafka, "a second copy");
    await withBroker(async (brokers) => {
      const k = new copy.Kafka({ brokers: brokers.split(","), logLevel: copy.logLevel.NOTHING });
      const topic = unique("read-back-copy");
      await createTopic(brokers, topic, 1);
      const alone = createKafkaJSConsumer({ consumer: k.consumer(consumerConfig(unique("read-back-copy-group"))), topics: [topic], handler: () => {} });
      void alone.done.catch(() => {});
      await assert.rejects(alone.start(), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError, `an InvalidArgumentError, got ${String(e)}`);
        assert.match(e.message, /^kafka .*could not be read back.*pass kafka/);
        return true;
      });
      await assert.rejects(alone.done, InvalidArgumentError);
      await handOver(brokers, { consumer: (groupId) => k.consumer(consumerConfig(groupId)), kafka: k }, "read-back-copy-handover");
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`KafkaJS without kafka: a member joining in a rebalance reads back the completed set of the partition it is given (${runtime()})`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("read-back-rebalance");
    const groupId = unique("read-back-rebalance-group");
    await createTopic(brokers, topic, 2);
    const perPartition = 10;
    const held = 3; // in each partition, the record at this offset is never finished by A
    await produce(brokers, topic, Array.from({ length: 2 * perPartition }, (_, i) => ({ key: `k${i}`, value: `${i}`, partition: i % 2 })));
    const k = kafka(brokers);

    const finishedByA = new Set<string>();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const controllerA = new AbortController();
    const controllerB = new AbortController();
    const a = createKafkaJSConsumer({
      consumer: k.consumer(consumerConfig(groupId)),
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 32,
      drainTimeoutMs: 300, // the held records stay unfinished through the revoke
      shutdownGraceMs: 300,
      signal: controllerA.signal,
      handler: async (_m, { partition, offset }) => {
        if (offset === held) return await gate;
        finishedByA.add(`${partition}:${offset}`);
      },
    });
    const ending: Array<Promise<void>> = [a.done];
    try {
      await a.start();
      await waitFor(() => finishedByA.size === 2 * (perPartition - 1), 60_000, "A finishing every record but the held ones");

      const ranByB: string[] = [];
      const claims: ClaimEvent[] = [];
      const b = createKafkaJSConsumer({
        consumer: k.consumer(consumerConfig(groupId)),
        topics: [topic],
        fromBeginning: true,
        ordering: "unordered",
        concurrency: 32,
        signal: controllerB.signal,
        handler: (_m, { partition, offset }) => void ranByB.push(`${partition}:${offset}`),
        on: { claim: (c) => void claims.push(c) },
      });
      ending.push(b.done);
      await b.start();
      await waitFor(() => claims.length >= 1, 60_000, "B reading back the partition it is given");
      await waitFor(() => ranByB.length >= 1, 60_000, "B running the unfinished record of its partition");
      const mines = b.metrics().partitions.map((p) => p.partition);
      assert.equal(mines.length, 1, `B was given one of the two partitions: ${JSON.stringify(mines)}`);
      const [mine] = mines;
      await sleep(500); // a record run twice would show up here
      controllerB.abort();
      controllerA.abort();
      release();
      await Promise.all([a.done, b.done]);

      assert.deepEqual(ranByB, [`${mine}:${held}`], "B ran only the record A left unfinished in its partition");
      const used = claims.filter((c) => c.partition === mine && c.ignored === undefined);
      assert.equal(used.length, 1, `B verified A's completed set of partition ${mine}: ${JSON.stringify(claims)}`);
      assert.equal(used[0].offset, held);
      assert.equal(used[0].finished, perPartition - held - 1, "every record above the held one");
    } finally {
      release();
      controllerA.abort();
      controllerB.abort();
      await Promise.allSettled(ending);
    }
  });
});
