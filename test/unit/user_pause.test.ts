// consumer.pause() / resume(): no record starts while paused (running ones finish), fetching
// is paused at the client, backpressure never lifts a user pause, metrics show it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError, ParallelConsumer, type PauseEvent } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

const tps = (n: number) => range(0, n).map((partition) => ({ topic: "t", partition }));

/** A consumer whose handlers run until the test lets them finish. */
function controlled(client: MemoryClient, extra: { highWaterMark?: number; lowWaterMark?: number; concurrency?: number } = {}) {
  const running: Array<{ m: Msg; partition: number; done: () => void }> = [];
  const started: Array<{ partition: number; offset: number }> = [];
  let check = (_partition: number): void => {};
  const c = new ParallelConsumer<Msg>(client, {
    engine: "js",
    ordering: "key",
    concurrency: extra.concurrency ?? 4,
    commit: { intervalMs: 5 },
    ...(extra.highWaterMark ? { highWaterMark: extra.highWaterMark, lowWaterMark: extra.lowWaterMark } : {}),
    handler: (m, { partition }) => {
      check(partition);
      started.push({ partition, offset: m.offset });
      return new Promise<void>((done) => running.push({ m, partition, done }));
    },
  });
  const finishAll = async (): Promise<void> => {
    while (running.length > 0) running.shift()!.done();
    await sleep(0);
  };
  return { c, running, started, finishAll, onStart: (f: (partition: number) => void) => void (check = f) };
}

describe("consumer.pause() / resume()", () => {
  test("property: no handler starts while its partition or the consumer is paused; all completes after resume", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("deliver" as const), partition: fc.integer({ min: 0, max: 1 }), n: fc.integer({ min: 1, max: 6 }), keys: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constantFrom("pause" as const, "resume" as const, "finish" as const) }),
      fc.record({ kind: fc.constantFrom("pausePartition" as const, "resumePartition" as const), partition: fc.integer({ min: 0, max: 1 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const client = new MemoryClient();
        const { c, running, started, finishAll, onStart } = controlled(client);
        let all = false;
        const one = new Set<number>();
        onStart((p) => assert.ok(!all && !one.has(p), `a handler of partition ${p} started while paused`));
        await c.start();
        client.sink.assigned(tps(2));
        const next = [0, 0];
        let delivered = 0;
        for (const o of ops) {
          if (o.kind === "deliver") {
            const offs = range(next[o.partition], o.n);
            if (client.deliver("t", o.partition, offs, undefined, (x) => `k${x % o.keys}`)) {
              next[o.partition] += o.n;
              delivered += o.n;
            } else assert.ok(all || one.has(o.partition) || c.metrics().partitions[o.partition].paused, "refused only while paused");
          } else if (o.kind === "pause") (all = true), c.pause();
          else if (o.kind === "resume") (all = false), one.clear(), c.resume();
          else if (o.kind === "pausePartition") one.add(o.partition), c.pause([{ topic: "t", partition: o.partition }]);
          else if (o.kind === "resumePartition") one.delete(o.partition), c.resume([{ topic: "t", partition: o.partition }]);
          else if (running.length > 0) running.shift()!.done(), await sleep(0);
          assert.equal(c.metrics().pausedByUser, all);
          for (const p of c.metrics().partitions) {
            assert.equal(p.pausedByUser, all || one.has(p.partition));
            if (all || one.has(p.partition)) assert.ok(client.paused.has(`t/${p.partition}`), "fetching paused");
          }
        }
        all = false, one.clear(), c.resume();
        while (c.metrics().completed < delivered) {
          await finishAll();
          await sleep(1);
        }
        assert.equal(started.length, delivered, "each record ran once");
        await c.shutdown();
        assert.equal(client.committed.get("t/0") ?? 0, next[0]);
        assert.equal(client.committed.get("t/1") ?? 0, next[1]);
      }),
      { numRuns: 40 },
    );
  });

  test("a backpressure resume leaves a user-paused partition paused at the client, and the reverse", async () => {
    const client = new MemoryClient();
    const pauses: PauseEvent[] = [];
    const { c, finishAll } = controlled(client, { highWaterMark: 4, lowWaterMark: 2, concurrency: 8 });
    c.on("pause", (e) => pauses.push(e));
    await c.start();
    client.sink.assigned(tps(1));
    client.deliver("t", 0, range(0, 5), undefined, (x) => `k${x}`);
    assert.equal(c.metrics().partitions[0].paused, true, "over the high mark");
    c.pause();
    await finishAll();
    await until(() => c.metrics().partitions[0].retained === 0);
    assert.equal(c.metrics().partitions[0].paused, false, "backpressure resumed");
    assert.ok(client.paused.has("t/0"), "but the user pause holds fetching");
    c.resume();
    assert.ok(!client.paused.has("t/0"));
    // The reverse: a user resume while over the high mark leaves fetching paused.
    c.pause();
    c.resume();
    client.deliver("t", 0, range(5, 5), undefined, (x) => `k${x}`);
    assert.ok(client.paused.has("t/0"));
    c.pause();
    c.resume();
    assert.ok(client.paused.has("t/0"), "still over the high mark");
    assert.deepEqual(pauses.map((p) => p.reason), ["high-water-mark", "user", "user", "high-water-mark", "user"]);
    await finishAll();
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 10);
  });

  test("a paused partition stays paused across a new assignment; a whole pause covers new partitions", async () => {
    const client = new MemoryClient();
    const { c, started, finishAll } = controlled(client);
    await c.start();
    c.pause([{ topic: "t", partition: 1 }]);
    client.sink.assigned(tps(2));
    assert.ok(client.paused.has("t/1") && !client.paused.has("t/0"));
    assert.equal(client.deliver("t", 1, [0]), false, "a paused partition takes no batch");
    client.sink.assigned(tps(3)); // a new generation
    assert.ok(client.paused.has("t/1"));
    c.pause();
    client.sink.assigned(tps(3));
    assert.ok([0, 1, 2].every((p) => client.paused.has(`t/${p}`)));
    c.resume([{ topic: "t", partition: 1 }]);
    assert.ok(client.paused.has("t/1"), "the whole pause still holds it");
    c.resume();
    assert.ok(client.paused.size === 0);
    client.deliver("t", 1, [0, 1]);
    await finishAll();
    assert.equal(started.length, 2);
    await c.shutdown();
  });

  test("a shutdown while paused waits only for the running records; queued ones stay uncommitted", async () => {
    const client = new MemoryClient();
    const { c, running, started } = controlled(client, { concurrency: 1 });
    await c.start();
    client.sink.assigned(tps(1));
    client.deliver("t", 0, range(0, 4), undefined, (x) => `k${x}`);
    c.pause();
    const stop = c.shutdown(60_000);
    running.shift()!.done();
    await stop;
    assert.deepEqual(started.map((s) => s.offset), [0]);
    assert.equal(client.committed.get("t/0"), 1);
  });

  test("bad partitions are typed errors naming the value", () => {
    const c = new ParallelConsumer<Msg>(new MemoryClient(), { engine: "js", handler: () => {} });
    for (const bad of ["t", [{ topic: "", partition: 0 }], [{ topic: "t", partition: -1 }], [null]]) {
      assert.throws(() => c.pause(bad as never), InvalidArgumentError);
      assert.throws(() => c.resume(bad as never), InvalidArgumentError);
    }
    assert.throws(() => c.pause([{ topic: "t", partition: 1.5 }]), /1\.5/);
  });
});
