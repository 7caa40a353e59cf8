// Misuse of the runner's assignment and the binding's topics is a typed error naming the
// value, and changes nothing: a partition listed twice in one assignment (or a bad topic or
// partition) leaves the running assignment as it was; `topics: [42]` and friends are
// refused when the KafkaJS consumer is built (a real KafkaJS consumer object, never connected).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { InvalidArgumentError, ParallelConsumer } from "../../core/mod.ts";
import { createKafkaJSConsumer } from "../../adapters/kafkajs/mod.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

const typed = (pattern: RegExp) => (e: unknown): boolean => {
  assert.ok(e instanceof InvalidArgumentError, `an InvalidArgumentError, not ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

describe("runner: assignment misuse", () => {
  test("a partition listed twice, or a bad topic or partition: typed error naming it, the assignment unchanged", async () => {
    const client = new MemoryClient();
    const release: Array<() => void> = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      handler: (m) => m.offset === 0 ? new Promise<void>((r) => release.push(r)) : undefined,
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "u", partition: 3 }]);
    assert.equal(client.deliver("t", 0, range(0, 5)), true);
    await until(() => c.metrics().partitions.find((p) => p.topic === "t")?.pending === 1, 2_000, "offset 0 alone pending");
    // Everything but the clocks (ages, paused time).
    const snapshot = (): string =>
      JSON.stringify(c.metrics().partitions.map(({ oldestPendingAgeMs: _a, pausedMs: _p, ...rest }) => rest));
    const before = snapshot();

    const bad: Array<[unknown, RegExp]> = [
      [[{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }, { topic: "t", partition: 0 }], /"t" partition 0 twice/],
      [[{ topic: "u", partition: 3 }, { topic: "", partition: 0 }], /topic names; got ""/],
      [[{ topic: 42, partition: 0 }], /topic names; got 42/],
      [[{ topic: "t", partition: -1 }], /got -1 for topic "t"/],
      [[{ topic: "t", partition: 1.5 }], /got 1\.5 for topic "t"/],
      [[{ topic: "t", partition: "0" }], /got "0" for topic "t"/],
      [[null], /topic names; got undefined/],
      ["t", /an array of partitions; got "t"/],
    ];
    for (const [partitions, pattern] of bad) {
      let read = 0;
      const committed = Promise.reject(new Error("never read")).finally(() => read++);
      assert.throws(
        () => client.sink.assigned(partitions as Parameters<typeof client.sink.assigned>[0], committed),
        typed(pattern),
        JSON.stringify(partitions),
      );
      await Promise.resolve();
      assert.equal(snapshot(), before, `nothing changed after ${JSON.stringify(partitions)}`);
    }
    assert.equal(client.paused.size, 0, "no partition was paused for a claim read");

    // The assignment still works: the held record finishes and the safe position moves.
    for (const r of release) r();
    await until(() => c.metrics().partitions.find((p) => p.topic === "t")?.safe === 5, 2_000, "t/0 safe at 5");
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 5);
  });

  test("a later assignment holding a partition again is a new generation, not a misuse", async () => {
    const client = new MemoryClient();
    const c = new ParallelConsumer<Msg>(client, { engine: "js", handler: () => {} });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, range(0, 3));
    await until(() => c.metrics().partitions[0]?.safe === 3);
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    assert.deepEqual(c.metrics().partitions.map((p) => `${p.topic}/${p.partition}`).sort(), ["t/0", "t/1"]);
    await c.shutdown();
  });
});

describe("KafkaJS binding: topics", () => {
  const kafka = new Kafka({ brokers: ["127.0.0.1:1"], logLevel: logLevel.NOTHING });
  for (
    const [topics, pattern] of [
      [[42], /topic names \(strings\) or RegExps; got 42/],
      [[], /non-empty array/],
      ["orders", /non-empty array.*got "orders"/],
      [[""], /empty name/],
      [["orders", null], /got null/],
    ] as Array<[unknown, RegExp]>
  ) {
    test(`topics: ${JSON.stringify(topics)} is a typed error naming it`, () => {
      assert.throws(
        () =>
          createKafkaJSConsumer({
            consumer: kafka.consumer({ groupId: "never-joined" }),
            topics: topics as string[],
            handler: () => {},
          }),
        typed(pattern),
      );
    });
  }
});
