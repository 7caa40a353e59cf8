// The KafkaJS transactional plumbing (adapters/kafkajs/transactions.ts) over a fake
// `Kafka`: an open aborted while it set up its producers releases them (a producer left in
// place could fence the partition's new owner later), and only those it set up.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Consumer, Kafka } from "kafkajs";
import { KafkaJSTransactions } from "../../adapters/kafkajs/transactions.ts";

/** A fake client: producers that connect and init at once; `fetchOffsets` answers when the test says. */
function fake() {
  const disconnected: string[] = [];
  const answers: Array<() => void> = [];
  const kafka = {
    producer: (config: { transactionalId: string }) => ({
      connect: () => Promise.resolve(),
      transaction: () => Promise.resolve({ abort: () => Promise.resolve(), isActive: () => false }),
      disconnect: () => {
        disconnected.push(config.transactionalId);
        return Promise.resolve();
      },
    }),
    admin: () => ({
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      fetchOffsets: ({ topics }: { topics: string[] }) =>
        new Promise((resolve) => answers.push(() => resolve(topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: "5", metadata: null }] }))))),
    }),
  } as unknown as Kafka;
  const consumer = { on: () => {}, events: { GROUP_JOIN: "consumer.group_join" }, seek: () => {} } as unknown as Consumer;
  return { kafka, consumer, disconnected, answers };
}

/** Waits until `ok()` holds (checked every 5 ms), at most 2 s. */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting for ${what}`);
}

describe("KafkaJSTransactions.open", () => {
  test("an open aborted after its producer was set up disconnects and forgets that producer", async () => {
    const f = fake();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    const controller = new AbortController();
    const opening = tx.open([{ topic: "t", partition: 0, kept: false }], controller.signal);
    await until(() => f.answers.length === 1, "the committed read (the producer is set up)");
    assert.equal(tx.stats().open, 1);
    controller.abort(); // the partition ended while its committed offsets were read
    f.answers[0]();
    await assert.rejects(opening, /ended before their producers were open/);
    assert.equal(tx.stats().open, 0, "no producer left for a partition that is not ours");
    await until(() => f.disconnected.length === 1, "the disconnect");
    assert.deepEqual(f.disconnected, ["g-t-0"]);
    await tx.close();
  });

  test("an aborted open leaves the producer a later open of the same partition set up", async () => {
    const f = fake();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    const first = new AbortController();
    const opening = tx.open([{ topic: "t", partition: 0, kept: false }], first.signal);
    await until(() => f.answers.length === 1, "the first open's committed read");
    first.abort();
    const again = tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal); // assigned again
    await until(() => f.answers.length === 2, "the second open's committed read");
    f.answers[0]();
    await assert.rejects(opening);
    f.answers[1]();
    await again;
    assert.equal(tx.stats().open, 1, "the second open's producer stays");
    assert.deepEqual(f.disconnected, ["g-t-0"], "only the first producer (fenced by the second) was disconnected");
    await tx.close();
  });
});
