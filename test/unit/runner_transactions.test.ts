// The runner's exactly-once mode over an in-memory transactional port that keeps what a
// broker would: committed offsets with metadata and the committed outputs. Checks the
// staging rule (a transaction holds the outputs of exactly the records its offset and
// completed set call finished), dropped outputs of failed attempts, dead letters in the
// transaction, and the reset after a failed transaction (records redone from what the
// "broker" holds, never an output twice).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeCompletedSet, InvalidArgumentError, type OutputRecord, ParallelConsumer, type RecordContext, type TransactionEvent } from "../../core/mod.ts";
import { TransactionStage } from "../../core/consumer/port/transactions.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";
import { MemoryPort } from "./memory_port.ts";

const one = [{ topic: "t", partition: 0 }];

const fromOf = (o: OutputRecord): number => Number(String(o.value).split("@")[1]);

describe("runner: exactly-once mode", () => {
  test("a transaction holds the outputs of exactly the records its offset and completed set call finished", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    const release = new Map<number, () => void>();
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 32,
      transactional: { port },
      handler: (m, { send }) => {
        send!({ topic: "out", value: m.value });
        if (m.offset % 4 === 1) return new Promise<void>((r) => release.set(m.offset, r)); // held back
      },
    });
    await c.start();
    client.sink.assigned(one);
    await until(() => port.opened.length === 1 && !client.paused.has("t/0"), 1_000, "opened");
    assert.ok(client.deliver("t", 0, range(0, 20)));
    await until(() => port.transactions.length > 0 && port.committed.has("t/0"), 1_000, "a transaction");
    await sleep(20);
    for (const t of port.transactions) {
      // Which offsets the commit calls finished: below the offset, plus the completed set above it.
      const d = t.metadata === undefined ? undefined : decodeCompletedSet("t", 0, t.offset, t.metadata);
      const claimed = (o: number): boolean => o < t.offset || (d?.ok === true && d.set.isFinished(o));
      for (const o of t.outputs) assert.ok(claimed(fromOf(o)), `output of ${fromOf(o)} in a commit at ${t.offset} that does not claim it`);
    }
    const got = port.outputs.map(fromOf).sort((a, b) => a - b);
    assert.deepEqual(got, range(0, 20).filter((o) => o % 4 !== 1), "every finished record's output, once; none of a running one");
    for (const r of release.values()) r();
    await until(() => port.committed.get("t/0")?.offset === 20, 1_000, "committed 20");
    assert.deepEqual(port.outputs.map(fromOf).sort((a, b) => a - b), range(0, 20));
    const m = c.metrics().transactions!;
    assert.equal(m.records, 20);
    assert.equal(m.aborted + m.fenced, 0);
    await c.shutdown(100);
    assert.ok(port.closed, "shutdown closes the producers");
  });

  test("a failed attempt's outputs are dropped; dead letters go in the transaction", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    let late: RecordContext | undefined; // record 0's context, kept past its attempt
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      transactional: { port },
      retry: { retries: 1, initialDelayMs: 1, jitter: 0, onExhausted: "dead-letter" },
      handler: (m, context) => {
        const { send, attempt } = context;
        if (m.offset === 0) late ??= context;
        send!({ topic: "out", value: `${m.value}#${attempt}` });
        if (m.offset === 2 && attempt === 1) throw new Error("transient");
        if (m.offset === 5) throw new Error("poison");
      },
    });
    await c.start();
    client.sink.assigned(one);
    await until(() => !client.paused.has("t/0"), 1_000, "opened");
    client.deliver("t", 0, range(0, 8));
    await until(() => port.committed.get("t/0")?.offset === 8, 1_000, "committed 8");
    const values = port.outputs.map((o) => `${o.topic} ${o.value}`).sort();
    assert.deepEqual(values, [
      "out t/0@0#1", "out t/0@1#1", "out t/0@2#2", "out t/0@3#1", "out t/0@4#1", "out t/0@6#1", "out t/0@7#1", "t.DLT t/0@5",
    ]);
    assert.equal(c.metrics().deadLettered, 1);
    assert.throws(
      () => late!.send!({ topic: "out", value: "late" }),
      (e: unknown) => e instanceof InvalidArgumentError && /send\(\) after the handler of t\/0@0 settled/.test((e as Error).message),
    );
    assert.equal(port.outputs.filter((o) => o.value === "late").length, 0, "a send after the attempt settled stages nothing");
    await c.shutdown(100);
  });

  test("a failed transaction resets the partition: redone from the committed offset, no output twice, none lost", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    const events: TransactionEvent[] = [];
    let runs = 0;
    // The "seek": after each open, deliver again from the committed offset.
    port.onOpen = (_p, offset) => void client.deliver("t", 0, range(offset ?? 0, 30 - (offset ?? 0)));
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 4,
      transactional: { port },
      commit: { intervalMs: 5 },
      on: { transaction: (e) => events.push(e) },
      handler: async (m, { send }) => {
        runs++;
        send!({ topic: "out", value: m.value });
        await sleep(1);
      },
    });
    await c.start();
    client.sink.assigned(one);
    await until(() => port.committed.get("t/0") !== undefined, 1_000, "a first commit");
    port.failNext = 1;
    const before = Date.now();
    await until(() => events.some((e) => e.outcome === "aborted"), 2_000, "an aborted transaction");
    // The ownership gate: no producer is made until the member is known to still own the partition.
    await sleep(20);
    assert.equal(port.opened.length, 1, "not opened again before ownership is confirmed");
    assert.equal(c.metrics().transactions!.waiting, 1);
    client.sink.owned!(before - 1); // an answer to a request sent before the failure proves nothing
    await sleep(20);
    assert.equal(port.opened.length, 1, "not opened on an answer to a request sent before the failure");
    await sleep(2);
    client.sink.owned!(Date.now()); // a heartbeat sent after the failure was answered: still ours
    await until(() => port.committed.get("t/0")?.offset === 30, 3_000, "committed 30");
    assert.equal(c.metrics().transactions!.waiting, 0);
    assert.ok(port.opened.length >= 2, "the partition was opened again");
    assert.equal(port.opened[1][0].kept, false, "a reset replaces the producer");
    const got = port.outputs.map(fromOf).sort((a, b) => a - b);
    assert.deepEqual(got, range(0, 30), "each output committed once");
    const m = c.metrics().transactions!;
    assert.equal(m.aborted, 1);
    assert.equal(m.resets, 1);
    assert.ok(runs > 30, "the aborted transaction's records ran again");
    await c.shutdown(100);
  });
});

describe("TransactionStage", () => {
  test("takes the outputs below the claim's end, keeps the rest, drops an ended assignment's", () => {
    const s = new TransactionStage<object>();
    const a = {}, b = {};
    s.completed(a, 3, [{ topic: "o", value: "3" }]);
    s.completed(a, 9, [{ topic: "o", value: "9a" }, { topic: "o", value: "9b" }]);
    s.completed(b, 1, [{ topic: "o", value: "b1" }]);
    s.completed(a, 4, []);
    assert.equal(s.size, 4);
    assert.deepEqual(s.take(a, 9).map((o) => o.value), ["3"]);
    assert.equal(s.size, 3);
    assert.deepEqual(s.take(a, 10).map((o) => o.value), ["9a", "9b"]);
    assert.deepEqual(s.take(a, 100), []);
    s.completed(a, 12, [{ topic: "o", value: "12" }]);
    s.prune((x) => x === a);
    assert.equal(s.size, 1, "the ended assignment's outputs are gone");
    s.drop(b);
    assert.equal(s.size, 0);
    assert.deepEqual(s.take(b, 100), []);
  });
});
