// The runner's lifecycle against an in-memory client: retries, dead letters, stopped
// partitions, orderly revoke, lost partitions, shutdown with a bounded grace.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ErrorEvent, ParallelConsumer, PartitionStoppedError, type RetryEvent } from "../../core/mod.ts";
import { backoffDelay, resolveRetryPolicy } from "../../core/consumer/records/retry.ts";
import { MemoryClient, range, sleep, until } from "./runner_client.ts";

const one = [{ topic: "t", partition: 0 }];

describe("runner: retries and dead letters", () => {
  test("backoff: exponential, capped, jittered downwards only", () => {
    const p = resolveRetryPolicy({ initialDelayMs: 10, multiplier: 3, maxDelayMs: 200, jitter: 0 });
    assert.deepEqual([1, 2, 3, 4, 5].map((a) => backoffDelay(p, a)), [10, 30, 90, 200, 200]);
    const j = resolveRetryPolicy({ initialDelayMs: 100, jitter: 0.5 });
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(j, 1);
      assert.ok(d >= 50 && d <= 100, `${d}`);
    }
    assert.throws(() => resolveRetryPolicy({ onExhausted: "dead-letter" }), /no dead-letter producer/);
    assert.throws(() => resolveRetryPolicy({ retries: -1 }), /retries/);
  });

  test("a failing record is retried; the frontier waits for it and never passes it", async () => {
    const client = new MemoryClient();
    const retries: RetryEvent[] = [];
    let calls = 0;
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      retry: { retries: 3, initialDelayMs: 5, jitter: 0 },
      handler: (m) => {
        if (m.offset === 1 && ++calls < 3) throw new Error(`boom ${calls}`);
      },
      on: { retry: (e) => retries.push(e) },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 5));
    await until(() => c.metrics().partitions[0].safe === 5);
    assert.deepEqual(retries.map((r) => [r.offset, r.attempt, r.delayMs]), [[1, 1, 5], [1, 2, 10]]);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 5);
  });

  test("retries used up, no dead letter: the partition stops, safe stays at the failed record", async () => {
    const client = new MemoryClient();
    const errors: ErrorEvent[] = [];
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "partition",
      retry: { retries: 1, initialDelayMs: 1 },
      handler: (m, { partition }) => {
        if (partition === 0 && m.offset === 3) throw new Error("poison");
      },
      on: { error: (e) => errors.push(e) },
    });
    await c.start();
    client.sink.assigned([...one, { topic: "t", partition: 1 }]);
    client.deliver("t", 0, range(0, 10));
    client.deliver("t", 1, range(0, 10));
    await until(() => errors.length === 1);
    assert.equal(errors[0].kind, "partition-stopped");
    assert.ok(errors[0].error instanceof PartitionStoppedError);
    assert.equal((errors[0].error as PartitionStoppedError).offset, 3);
    assert.ok(client.paused.has("t/0"));
    assert.equal(client.deliver("t", 0, range(10, 5)), false);
    await until(() => c.metrics().partitions[1].safe === 10);
    const p0 = c.metrics().partitions[0];
    assert.equal(p0.state, "stopped");
    assert.equal(p0.safe, 3);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 3);
    assert.equal(client.committed.get("t/1"), 10);
  });

  test("dead letter: the record completes only once the dead-letter produce is acknowledged", async () => {
    let ack!: () => void;
    const acked = new Promise<void>((r) => (ack = r));
    let produceCalls = 0;
    const client = new MemoryClient({
      deadLetter: async () => {
        if (++produceCalls === 1) throw new Error("DLQ broker down"); // first produce fails: retried
        await acked;
      },
    });
    const dead: number[] = [];
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      retry: { retries: 2, initialDelayMs: 1 },
      handler: (m) => {
        if (m.offset === 2) throw new Error("bad record");
      },
      on: { deadLetter: (e) => dead.push(e.offset) },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 6));
    await until(() => produceCalls === 2);
    await sleep(10);
    assert.equal(c.metrics().partitions[0].safe, 2, "not complete before the produce is acknowledged");
    ack();
    await until(() => c.metrics().partitions[0].safe === 6);
    assert.deepEqual(dead, [2]);
    assert.equal(client.deadLetters.length, 1);
    assert.equal(client.deadLetters[0].info.attempts, 3);
    assert.match(String(client.deadLetters[0].info.error), /bad record/);
    await c.shutdown();
  });
});

describe("runner: rebalances and shutdown", () => {
  test("orderly revoke: stop dispatching, drain, commit; the old assignment's completions are rejected", async () => {
    const client = new MemoryClient();
    const gates = new Map<number, () => void>();
    const started: number[] = [];
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 2,
      drainTimeoutMs: 1_000,
      handler: (m) => {
        started.push(m.offset);
        return new Promise<void>((r) => gates.set(m.offset, r));
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 10));
    await until(() => started.length === 2);
    const revoked = client.sink.revoking();
    await sleep(5);
    gates.get(0)!();
    gates.get(1)!();
    await revoked;
    assert.deepEqual(started, [0, 1], "no record started after the revoke began");
    assert.equal(client.committed.get("t/0"), 2);
    // new generation, same partition: fresh tracker; it is delivered again from the commit
    client.sink.assigned(one);
    assert.equal(c.metrics().partitions[0].safe, undefined);
    assert.equal(client.deliver("t", 0, range(2, 3)), true);
    await until(() => started.length === 4);
    gates.get(2)!();
    gates.get(3)!();
    await until(() => started.length === 5);
    gates.get(4)!();
    await until(() => c.metrics().partitions[0].safe === 5);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 5);
  });

  test("a new assignment without an orderly revoke loses the old one: never committed again", async () => {
    const client = new MemoryClient();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      commit: { mode: "eager" },
      handler: async (m, ctx) => {
        if (m.offset === 0) {
          await gate;
          assert.ok(ctx.signal.aborted, "the lost record's signal is aborted");
        }
      },
    });
    await c.start();
    client.sink.assigned([...one, { topic: "t", partition: 1 }]);
    client.deliver("t", 0, range(0, 5));
    await sleep(10);
    const before = client.commits.length;
    client.sink.assigned([{ topic: "t", partition: 1 }]); // e.g. session expired: t/0 is gone
    release();
    await sleep(20);
    assert.ok(client.commits.slice(before).flat().every((o) => o.partition !== 0), "t/0 never committed after it was lost");
    assert.deepEqual(c.metrics().partitions.map((p) => p.partition), [1]);
    assert.equal(client.deliver("t", 0, range(5, 1)), false);
    client.sink.lost();
    assert.equal(c.metrics().partitions.length, 0);
    await c.shutdown();
  });

  test("shutdown: stop fetching, let running records finish, commit, close", async () => {
    const client = new MemoryClient();
    const controller = new AbortController();
    const done: number[] = [];
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "partition",
      signal: controller.signal,
      handler: async (m) => {
        await sleep(20);
        done.push(m.offset);
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 100));
    await until(() => done.length >= 2);
    controller.abort();
    await c.done;
    assert.equal(c.state, "stopped");
    assert.ok(client.stoppedFetching && client.closed);
    assert.ok(done.length < 10, "queued records were not started");
    assert.equal(client.committed.get("t/0"), done.length, "everything finished is committed, nothing else");
    assert.deepEqual(done, range(0, done.length));
  });

  test("shutdown under key ordering still runs records parked below the highest started offset", async () => {
    const client = new MemoryClient();
    let release!: () => void, releaseOthers!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const others = new Promise<void>((r) => (releaseOthers = r));
    const started: number[] = [];
    const done: number[] = [];
    const keys = ["A", "A", "B", "C", "D", "E", "F", "G", "H", "I"];
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "key",
      concurrency: 4,
      handler: async (m) => {
        started.push(m.offset);
        if (m.offset === 0) await gate;
        else if (m.offset !== 1) await others; // each record but 0 and 1 waits for the shutdown to begin
        done.push(m.offset);
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 10), 10, (o) => keys[o]);
    // 0, 2, 3, 4 run; 1 waits behind key A; 5… wait for a worker. No clock decides it: on a loaded
    // machine a timer set for 2 ms fired after records sleeping 10 ms had ended and 5… had started.
    await until(() => started.length === 4);
    assert.deepEqual([...started].sort((a, b) => a - b), [0, 2, 3, 4]);
    const stopped = c.shutdown();
    await sleep(30);
    releaseOthers(); // 2, 3, 4 end during the shutdown: their workers start nothing queued above 4
    await sleep(10);
    release();
    await stopped;
    // 1 ran after 0 (its key), although shutdown had begun: what completed is a prefix
    assert.deepEqual([...done].sort((a, b) => a - b), [0, 1, 2, 3, 4]);
    assert.ok(done.indexOf(1) > done.indexOf(0));
    assert.equal(client.committed.get("t/0"), 5);
  });

  test("a record failing during the shutdown drain is retried within the grace, so the commit passes it", async () => {
    const client = new MemoryClient();
    const attempts = new Map<number, number>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 4,
      retry: { retries: 5, initialDelayMs: 60_000, jitter: 0 }, // a backoff far beyond the grace: capped to it
      handler: async (m) => {
        const n = (attempts.get(m.offset) ?? 0) + 1;
        attempts.set(m.offset, n);
        if (m.offset === 1) {
          await gate;
          if (n < 3) throw new Error(`transient ${n}`);
        }
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 4));
    await until(() => attempts.size === 4);
    const stopped = c.shutdown(2_000);
    release();
    const t0 = Date.now();
    await stopped;
    assert.ok(Date.now() - t0 < 1_900, `the retries ran well within the grace (${Date.now() - t0} ms)`);
    assert.equal(attempts.get(1), 3, "retried twice during the drain");
    assert.equal(client.committed.get("t/0"), 4, "the final commit passes the retried record");
  });

  test("a record failing during an orderly revoke's drain is retried within the drain bound", async () => {
    const client = new MemoryClient();
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "partition",
      drainTimeoutMs: 1_000,
      retry: { retries: 3, initialDelayMs: 30_000, jitter: 0 },
      handler: async (m) => {
        if (m.offset === 2) {
          await gate;
          if (++calls < 2) throw new Error("transient");
        }
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 5));
    await until(() => c.metrics().partitions[0].safe === 2);
    const revoked = client.sink.revoking();
    release();
    await revoked;
    assert.equal(calls, 2);
    assert.equal(client.committed.get("t/0"), 3, "the drain commit covers the retried record, not the ones dropped behind it");
    await c.shutdown();
  });

  test("a revoke the client does not await (it rejoins at once) starts nothing more; an awaited one runs what is queued below the highest started offset", async () => {
    // Key order: record 0 (key a) hangs until released, record 1 (key a) waits behind it,
    // records 2-9 (other keys) finish: the highest started offset is 9, record 1 is below it.
    for (const awaited of [false, true]) {
      const client = new MemoryClient();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const ran: number[] = [];
      const c = new ParallelConsumer(client, {
        engine: "js",
        ordering: "key",
        drainTimeoutMs: 2_000,
        handler: async (m) => {
          ran.push(m.offset);
          if (m.offset === 0) await gate;
        },
      });
      await c.start();
      client.sink.assigned(one);
      client.deliver("t", 0, range(0, 10), 10, (o) => (o <= 1 ? "a" : `k${o}`));
      await until(() => ran.length === 9, 2_000, "all but record 1 started");
      const revoked = client.sink.revoking(undefined, { awaited });
      assert.equal(client.commits.length > 0, true, "a commit goes out at once");
      release();
      await revoked;
      if (awaited) assert.ok(ran.includes(1), "awaited: the record queued below the highest started offset ran in the drain");
      else assert.ok(!ran.includes(1), `not awaited: nothing started after the revoke began (${ran.join(",")})`);
      assert.equal(client.committed.get("t/0"), awaited ? 10 : 1, "what the drain's commit covers");
      await c.shutdown();
    }
  });

  test("an orderly revoke aborts the signal of a handler still running at the drain bound, before any new assignment", async () => {
    const client = new MemoryClient();
    let abortedAt = 0;
    let finishedAt = 0;
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      drainTimeoutMs: 50,
      handler: (m, ctx) => {
        if (m.offset !== 1) return;
        return new Promise<void>((r) => {
          ctx.signal.addEventListener("abort", () => {
            abortedAt = Date.now();
            r();
          });
        });
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 4));
    await until(() => c.metrics().partitions[0].blocked === 2);
    const t0 = Date.now();
    await client.sink.revoking();
    finishedAt = Date.now();
    assert.ok(abortedAt > 0, "the stuck handler's signal is aborted when the bound expires");
    assert.ok(abortedAt - t0 >= 40 && abortedAt <= finishedAt, `aborted ${abortedAt - t0} ms after the revoke began`);
    assert.equal(client.committed.get("t/0"), 1, "the revoke's commit stops below the abandoned record");
    await c.shutdown();
  });

  test("shutdown: the grace bounds a stuck handler; its signal is aborted; commit stops below it", async () => {
    const client = new MemoryClient();
    let aborted = false;
    const c = new ParallelConsumer(client, {
      engine: "js",
      ordering: "unordered",
      shutdownGraceMs: 30,
      handler: (m, ctx) => {
        if (m.offset !== 3) return;
        return new Promise<void>((r) => ctx.signal.addEventListener("abort", () => ((aborted = true), r())));
      },
    });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 8));
    await until(() => c.metrics().partitions[0].blocked === 4);
    const t0 = Date.now();
    await c.shutdown();
    assert.ok(Date.now() - t0 < 1_000);
    assert.ok(aborted);
    assert.equal(client.committed.get("t/0"), 3);
  });

  test("client failure rejects done and never commits again", async () => {
    const client = new MemoryClient();
    const c = new ParallelConsumer(client, { engine: "js", handler: () => {} });
    await c.start();
    client.sink.assigned(one);
    client.deliver("t", 0, range(0, 3));
    const n = client.commits.length;
    client.sink.failed(new Error("crashed"));
    await assert.rejects(c.done, /crashed/);
    assert.equal(c.state, "failed");
    await sleep(10);
    assert.equal(client.commits.length, n);
  });
});
