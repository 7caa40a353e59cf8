// The KafkaJS transactional plumbing (adapters/kafkajs/transactions.ts) over a fake
// `Kafka`: an open aborted while it set up its producers releases them (a producer left in
// place could fence the partition's new owner later), and only those it set up. A
// transaction's outcome names the fencing when the broker's answer comes just after the
// timeout, and no transaction begins on a producer whose abort was refused (KafkaJS leaves
// it ABORTING, where beginTransaction throws).
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

/** The error KafkaJS throws when the broker fenced the producer. */
const fencedError = (): Error => Object.assign(new Error("The producer attempted to use a producer id which is not currently assigned"), { type: "INVALID_PRODUCER_EPOCH", code: 47 });

/**
 * A fake client whose producers keep KafkaJS's transaction states (READY, TRANSACTING,
 * COMMITTING, ABORTING) and, like KafkaJS, refuse to begin a transaction outside READY.
 * `steps` says how the next transaction's offsets, commit and abort end.
 */
function fakeStates() {
  const begun: string[] = []; // the state each transaction() call found
  const log: string[] = []; // producers made and disconnected, transactions committed, in order
  const steps = {
    sendOffsets: (): Promise<void> => Promise.resolve(),
    commit: (): Promise<void> => Promise.resolve(),
    abort: (): Promise<void> => Promise.resolve(),
  };
  const kafka = {
    producer: () => {
      let state = "READY";
      let opened = false; // the open's own empty transaction (InitProducerId) always ends
      log.push("producer");
      return {
        connect: () => Promise.resolve(),
        disconnect: () => {
          log.push("disconnect");
          return Promise.resolve();
        },
        transaction: () => {
          const setUp = !opened;
          opened = true;
          if (!setUp) begun.push(state);
          if (state !== "READY") return Promise.reject(new Error(`Cannot call "beginTransaction" in state "${state}"`));
          state = "TRANSACTING";
          return Promise.resolve({
            isActive: () => state === "TRANSACTING",
            sendBatch: () => Promise.resolve(),
            sendOffsets: () => steps.sendOffsets(),
            commit: async () => {
              state = "COMMITTING";
              await steps.commit();
              state = "READY";
              log.push("committed");
            },
            abort: async () => {
              state = "ABORTING";
              if (!setUp) await steps.abort(); // refused: KafkaJS stays ABORTING
              state = "READY";
            },
          });
        },
      };
    },
    admin: () => ({
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      fetchOffsets: ({ topics }: { topics: string[] }) => Promise.resolve(topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: "0", metadata: null }] }))),
    }),
  } as unknown as Kafka;
  const consumer = { on: () => {}, events: { GROUP_JOIN: "consumer.group_join" }, seek: () => {} } as unknown as Consumer;
  return { kafka, consumer, steps, begun, log };
}

const tx0 = { topic: "t", partition: 0, offset: 3, outputs: [{ topic: "out", value: "x" }] };

describe("KafkaJSTransactions.commit", () => {
  test("a fencing the broker answers just after the transaction's timeout is reported fenced", async () => {
    const f = fakeStates();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    await tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal);
    // The answer comes 30 ms past the 100 ms bound, as for a process stopped past it and woken.
    f.steps.commit = () => new Promise((_, reject) => setTimeout(() => reject(fencedError()), 130));
    const [outcome] = await tx.commit([tx0], 100);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.ok === false && outcome.fenced, true, `fenced, not aborted: ${String(outcome.ok === false && outcome.error)}`);
    await tx.close();
  });

  test("a timeout without any answer stays aborted (not fenced)", async () => {
    const f = fakeStates();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    await tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal);
    f.steps.commit = () => new Promise(() => {});
    const [outcome] = await tx.commit([tx0], 50);
    assert.equal(outcome.ok === false && outcome.fenced, false);
    await tx.close();
  });

  test("no transaction begins on a producer whose abort the broker refused (KafkaJS left it ABORTING)", async () => {
    const f = fakeStates();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    await tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal);
    f.steps.sendOffsets = () => Promise.reject(fencedError());
    f.steps.abort = () => Promise.reject(fencedError());
    // Two cycles of the same partition one behind the other (a revoke's urgent commit overlapping the periodic one).
    const [first, second] = await Promise.all([tx.commit([tx0], 1_000), tx.commit([{ ...tx0, offset: 4 }], 1_000)]);
    assert.deepEqual(f.begun, ["READY"], "only the first transaction began");
    assert.equal(first[0].ok === false && first[0].fenced, true, "the first was fenced");
    assert.equal(second[0].ok, false, "the second did not run on the broken producer");
    assert.equal(second[0].ok === false && second[0].fenced, true, "queued behind the fenced one: refused as fenced");
    const [later] = await tx.commit([{ ...tx0, offset: 5 }], 1_000);
    assert.equal(later.ok === false && later.fenced, true, "a later cycle before the reset: fenced too");
    assert.deepEqual(f.begun, ["READY"], "still only the first transaction began");
    await tx.close();
  });

  test("a transaction in flight ends before its partition's producer is replaced or released (a revoke's last one racing the rejoin)", async () => {
    const f = fakeStates();
    const tx = new KafkaJSTransactions(f.kafka, f.consumer, { groupId: "g" });
    await tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal);
    let finish: (() => void) | undefined;
    f.steps.commit = () => new Promise<void>((r) => (finish = r));
    const flush = tx.commit([tx0], 5_000);
    await until(() => finish !== undefined, "the commit in flight");
    // The new assignment keeps the partition: opening it again must not fence the flush.
    const reopen = tx.open([{ topic: "t", partition: 0, kept: false }], new AbortController().signal);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(f.log, ["producer"], "no new producer (InitProducerId) while the transaction is in flight");
    finish!();
    assert.deepEqual((await flush)[0], { ok: true });
    await reopen;
    assert.deepEqual(f.log, ["producer", "committed", "disconnect", "producer"]);
    // The partition moves away while a transaction is in flight: its producer is closed after it.
    finish = undefined;
    f.steps.commit = () => new Promise<void>((r) => (finish = r));
    const last = tx.commit([{ ...tx0, offset: 4 }], 5_000);
    await until(() => f.log.length === 4 && finish !== undefined, "the second commit in flight");
    const released = tx.release([{ topic: "t", partition: 0 }]);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(f.log.filter((e) => e === "disconnect").length, 1, "not disconnected under its transaction");
    finish!();
    assert.deepEqual((await last)[0], { ok: true });
    await released;
    assert.deepEqual(f.log.slice(4), ["committed", "disconnect"]);
    await tx.close();
  });
});
