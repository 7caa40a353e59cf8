// stuck: { maxPendingMs, action }: a record unfinished past the limit after its first
// attempt started is reported, dead-lettered once (signal aborted, late completion
// ignored) or stops its partition. Not the commit stall guard (commit.stallMs).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type ErrorEvent,
  InvalidArgumentError,
  ParallelConsumer,
  PartitionStoppedError,
  RetryAfterError,
  type StuckEvent,
  StuckRecordError,
} from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

const one = [{ topic: "t", partition: 0 }];

/** A handler whose records in `hang` run until released (their signals are kept). */
function hanging(hang: Set<number>) {
  const late: Array<() => void> = [];
  const signals = new Map<number, AbortSignal>();
  const handler = (m: Msg, { signal }: { signal: AbortSignal }) => {
    signals.set(m.offset, signal);
    // The others finish in the call: a record that sleeps, even 1 ms, can pass a 10 ms
    // maxPendingMs behind a late event loop on a loaded machine and be found stuck.
    if (!hang.has(m.offset)) return undefined;
    return new Promise<void>((resolve) => late.push(resolve));
  };
  return { handler, late, signals, release: () => late.splice(0).forEach((r) => r()) };
}

describe("stuck records", () => {
  test("options: maxPendingMs > 0, a known action, dead-letter needs a producer; typed errors naming the value", () => {
    const client = new MemoryClient();
    const make = (stuck: unknown) => new ParallelConsumer<Msg>(client, { handler: () => {}, stuck: stuck as never });
    for (const bad of [0, -5, NaN, Infinity, "100"]) {
      assert.throws(() => make({ maxPendingMs: bad }), (e: unknown) => e instanceof InvalidArgumentError && /stuck\.maxPendingMs/.test((e as Error).message));
    }
    assert.throws(() => make({ maxPendingMs: 10, action: "skip" }), /stuck\.action.*"skip"/);
    assert.throws(() => make({ maxPendingMs: 10, action: "dead-letter" }), /no dead-letter producer/);
    assert.throws(() => make({ maxPendingMS: 10 }), /maxPendingMS.*maxPendingMs/);
    make({ maxPendingMs: 10 }); // action defaults to "report"
  });

  test("dead-letter: the stuck record is dead-lettered once, its signal aborted, its worker freed, its late completion ignored", async () => {
    const client = new MemoryClient({ deadLetter: async () => {} });
    const h = hanging(new Set([1]));
    const stuck: StuckEvent[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "partition",
      concurrency: 1,
      stuck: { maxPendingMs: 30, action: "dead-letter" },
      handler: h.handler,
      on: { stuck: (e) => stuck.push(e) },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 5));
    await until(() => c.metrics().partitions[0].safe === 5, 5_000, "the partition passes the stuck record");
    assert.equal(h.late.length, 1, "its handler has not returned: its worker was freed");
    assert.ok(h.signals.get(1)!.aborted && h.signals.get(1)!.reason instanceof StuckRecordError);
    assert.ok(!h.signals.get(2)!.aborted, "only its own signal");
    assert.deepEqual(stuck.map((e) => [e.offset, e.action, e.attempt]), [[1, "dead-letter", 1]]);
    assert.ok(stuck[0].pendingMs > 30);
    assert.equal(client.deadLetters.length, 1);
    assert.ok(client.deadLetters[0].info.error instanceof StuckRecordError);
    h.release(); // the late completion
    await sleep(20);
    const m = c.metrics();
    assert.equal(m.completed, 5, "counted once, by its dead letter");
    assert.equal(m.stuck, 1);
    assert.equal(m.running, 0);
    assert.equal(m.partitions[0].inFlight, 0);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 5);
  });

  test("stop: the partition stops below the stuck record (PartitionStoppedError caused by StuckRecordError)", async () => {
    const client = new MemoryClient();
    const h = hanging(new Set([2]));
    const errors: ErrorEvent[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "key",
      stuck: { maxPendingMs: 20, action: "stop" },
      handler: h.handler,
      on: { error: (e) => errors.push(e) },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 4), undefined, (o) => `k${o}`);
    await until(() => errors.some((e) => e.kind === "partition-stopped"), 5_000);
    const e = errors.find((x) => x.kind === "partition-stopped")!.error as PartitionStoppedError;
    assert.ok(e instanceof PartitionStoppedError && e.cause instanceof StuckRecordError && e.offset === 2);
    assert.ok(h.signals.get(2)!.aborted);
    assert.equal(c.metrics().partitions[0].state, "stopped");
    assert.ok(client.paused.has("t/0"));
    h.release();
    await sleep(10);
    assert.equal(c.metrics().partitions[0].safe, 2, "never passes it");
    await c.shutdown();
  });

  test("report: only the event, once; the record finishes normally", async () => {
    const client = new MemoryClient();
    const h = hanging(new Set([0]));
    const stuck: StuckEvent[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      stuck: { maxPendingMs: 15 },
      handler: h.handler,
      on: { stuck: (e) => stuck.push(e) },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 2));
    await until(() => stuck.length === 1);
    await sleep(50);
    assert.equal(stuck.length, 1, "reported once");
    assert.ok(!h.signals.get(0)!.aborted);
    h.release();
    await until(() => c.metrics().partitions[0].safe === 2);
    await c.shutdown();
  });

  test("a record waiting to retry past the limit is dead-lettered without waiting for its timer", async () => {
    const client = new MemoryClient({ deadLetter: async () => {} });
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      retry: { retries: 5, maxDelayMs: 60_000 },
      stuck: { maxPendingMs: 20, action: "dead-letter" },
      handler: (m) => {
        if (m.offset === 0) throw new RetryAfterError(60_000);
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 3));
    await until(() => c.metrics().partitions[0].safe === 3, 5_000);
    assert.equal(client.deadLetters.length, 1);
    assert.equal(c.metrics().partitions[0].inFlight, 0);
    await c.shutdown();
  });

  test("property: each stuck record is dead-lettered exactly once, late completions never count", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.constantFrom("partition" as const, "key" as const, "unordered" as const),
        async (hangs, ordering) => {
          const client = new MemoryClient({ deadLetter: async () => {} });
          const hang = new Set(hangs.flatMap((x, i) => (x ? [i] : [])));
          const h = hanging(hang);
          const c = new ParallelConsumer<Msg>(client, {
            engine: "js",
            ordering,
            concurrency: 3,
            stuck: { maxPendingMs: 10, action: "dead-letter" },
            handler: h.handler,
          });
          await c.start();
          client.sink.assigned(one);
          client.deliver("t", 0, range(0, hangs.length), undefined, (o) => `k${o % 3}`);
          await until(() => c.metrics().partitions[0].safe === hangs.length, 5_000, "all settled");
          h.release();
          await sleep(5);
          assert.deepEqual(client.deadLetters.map((d) => d.message.offset).sort((a, b) => a - b), [...hang]);
          const m = c.metrics();
          assert.equal(m.completed, hangs.length);
          assert.equal(m.stuck, hang.size);
          assert.equal(m.partitions[0].inFlight, 0);
          await c.shutdown();
          assert.equal(client.committed.get("t/0"), hangs.length);
        },
      ),
      { numRuns: 15 },
    );
  });
});
