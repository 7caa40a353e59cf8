// Records started directly inside the delivery (no queue while a worker is free and the
// lane has nothing waiting), with handlers that return at once, return promises and throw,
// mixed within one batch: the ordering modes, the bounds, retries and commits still hold.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Ordering, ParallelConsumer, type RecordContext } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

/** What a record's handler does, by offset: return at once, await a timer, or throw on its first attempt. */
const kind = (offset: number): "sync" | "async" | "throws" =>
  offset % 7 === 3 ? "throws" : offset % 5 === 0 ? "async" : "sync";

interface Seen {
  /** Offsets finished, per partition, in finishing order. */
  finished: Map<number, number[]>;
  /** Per key ("partition:key"), offsets in starting order. */
  started: Map<string, number[]>;
  violations: string[];
  maxTotal: number;
  maxPerPartition: number;
}

async function run(
  ordering: Ordering,
  options: { concurrency: number; maxInFlightPerPartition?: number },
): Promise<{ seen: Seen; client: MemoryClient; c: ParallelConsumer<Msg> }> {
  const client = new MemoryClient();
  const seen: Seen = { finished: new Map(), started: new Map(), violations: [], maxTotal: 0, maxPerPartition: 0 };
  const busyKeys = new Set<string>();
  const running = new Map<number, number>();
  let total = 0;
  const c = new ParallelConsumer<Msg>(client, {
    engine: "js",
    ordering,
    ...options,
    commit: { intervalMs: 5 },
    retry: { retries: 3, initialDelayMs: 1, maxDelayMs: 2 },
    handler: (m: Msg, { partition, offset, attempt }: RecordContext) => {
      const key = `${partition}:${m.key}`;
      if (ordering === "key" && busyKeys.has(key)) seen.violations.push(`key ${key} busy at ${offset}`);
      busyKeys.add(key);
      (seen.started.get(key) ?? seen.started.set(key, []).get(key)!).push(offset);
      total++;
      running.set(partition, (running.get(partition) ?? 0) + 1);
      seen.maxTotal = Math.max(seen.maxTotal, total);
      seen.maxPerPartition = Math.max(seen.maxPerPartition, running.get(partition)!);
      const end = (): void => {
        busyKeys.delete(key);
        total--;
        running.set(partition, running.get(partition)! - 1);
      };
      const finish = (): void => {
        end();
        (seen.finished.get(partition) ?? seen.finished.set(partition, []).get(partition)!).push(offset);
      };
      const k = kind(offset);
      if (k === "throws" && attempt === 1) {
        end();
        throw new Error(`first attempt of ${offset}`);
      }
      if (k === "async") return sleep(Math.random() * 2).then(finish);
      finish();
      return undefined;
    },
  });
  await c.start();
  client.sink.assigned([0, 1].map((partition) => ({ topic: "t", partition })));
  const keyOf = (o: number): string => `k${o % 4}`;
  for (let p = 0; p < 2; p++) assert.equal(client.deliver("t", p, range(0, 60), 60, keyOf), true);
  for (let p = 0; p < 2; p++) assert.equal(client.deliver("t", p, range(60, 60), 120, keyOf), true);
  await until(() => [0, 1].every((p) => (seen.finished.get(p)?.length ?? 0) === 120), 5_000, "every record finished");
  return { seen, client, c };
}

describe("runner: records started directly in the delivery", () => {
  for (const ordering of ["unordered", "key", "partition"] as const) {
    test(`${ordering}: sync, async and throwing handlers mixed in a batch; bounds, order, retries, commits hold`, async () => {
      const { seen, client, c } = await run(ordering, { concurrency: 4, maxInFlightPerPartition: 3 });
      assert.deepEqual(seen.violations, []);
      assert.ok(seen.maxTotal <= 4, `ran ${seen.maxTotal} at once`);
      assert.ok(seen.maxPerPartition <= (ordering === "partition" ? 1 : 3), `ran ${seen.maxPerPartition} of a partition at once`);
      for (let p = 0; p < 2; p++) {
        const finished = seen.finished.get(p)!;
        assert.deepEqual([...finished].sort((a, b) => a - b), range(0, 120), `partition ${p}: each record finished once`);
        if (ordering === "partition") assert.deepEqual(finished, range(0, 120), `partition ${p} in offset order`);
      }
      if (ordering === "key") {
        // started in offset order within each key (a retry starts its record again, in place)
        for (const [key, offsets] of seen.started) {
          const firsts = offsets.filter((o, i) => offsets.indexOf(o) === i);
          assert.deepEqual(firsts, [...firsts].sort((a, b) => a - b), `key ${key}`);
        }
      }
      const m = c.metrics();
      assert.equal(m.completed, 240);
      assert.equal(m.retries, 2 * range(0, 120).filter((o) => kind(o) === "throws").length);
      await c.shutdown();
      assert.equal(client.committed.get("t/0"), 120);
      assert.equal(client.committed.get("t/1"), 120);
    });
  }

  test("records that finished at once are applied before anything outside the delivery looks", async () => {
    const client = new MemoryClient();
    const safeSeen: number[] = [];
    let c: ParallelConsumer<Msg> | undefined = undefined;
    c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "partition",
      handler: (m: Msg) => {
        // The records before it finished; the tracker knows by the time a later handler is
        // entered from outside the delivery (an async record makes the rest queue).
        if (m.offset === 3) return sleep(1).then(() => void safeSeen.push(c!.metrics().partitions[0].safe ?? -1));
        return undefined;
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, range(0, 6));
    await until(() => c!.metrics().completed === 6, 2_000, "all done");
    assert.deepEqual(safeSeen, [3]); // 0..2 were applied before record 3's promise settled
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 6);
  });

  test("a handler that throws synchronously after records that finished: those are applied, it is retried", async () => {
    const client = new MemoryClient();
    const attempts = new Map<number, number>();
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 1 },
      handler: (m: Msg, { attempt }: RecordContext) => {
        attempts.set(m.offset, attempt);
        if (m.offset === 2 && attempt === 1) throw new Error("once");
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, range(0, 5));
    // synchronously after the delivery: 0 and 1 are complete, 2 waits to retry
    assert.equal(c.metrics().partitions[0].safe, 2);
    await until(() => c.metrics().completed === 5, 2_000, "all done");
    assert.equal(attempts.get(2), 2);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 5);
  });
  test("a batch delivered from inside a handler (a client that delivers synchronously) is queued, and everything completes", async () => {
    const client = new MemoryClient();
    let nested = false;
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      handler: (m: Msg, { partition }: RecordContext) => {
        if (partition === 0 && m.offset === 1 && !nested) {
          nested = true;
          assert.equal(client.deliver("t", 1, range(0, 4)), true);
        }
      },
    });
    await c.start();
    client.sink.assigned([0, 1].map((partition) => ({ topic: "t", partition })));
    client.deliver("t", 0, range(0, 4));
    await until(() => c.metrics().completed === 8, 2_000, "all done");
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 4);
    assert.equal(client.committed.get("t/1"), 4);
  });
  test("the context of a directly started record: its fields during the call and after it (kept records too), its signal aborting on a loss", async () => {
    const client = new MemoryClient();
    const seen: Array<{ offset: number; during: string; after?: string }> = [];
    const kept: RecordContext[] = [];
    const show = (c: RecordContext): string => `${c.topic}/${c.partition}@${c.offset}#${c.attempt}:${c.signal.aborted}`;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      retry: { retries: 1, initialDelayMs: 1, maxDelayMs: 1 },
      handler: (m: Msg, ctx: RecordContext) => {
        const row: { offset: number; during: string; after?: string } = { offset: m.offset, during: show(ctx) };
        seen.push(row);
        if (m.offset === 1) {
          kept.push(ctx);
          return gate.then(() => void (row.after = show(ctx))); // still in flight when the call returns
        }
        if (m.offset === 2 && ctx.attempt === 1) throw new Error("once"); // retried with attempt 2
        if (m.offset === 3) {
          kept.push(ctx);
          return new Promise<void>(() => {}); // never settles: lost below
        }
        return undefined;
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 4 }]);
    client.deliver("t", 4, range(0, 4));
    release();
    await until(() => seen.some((r) => r.offset === 2 && r.during.endsWith("#2:false")) && seen[1].after !== undefined, 2_000, "retry and kept record");
    assert.deepEqual(seen.map((r) => r.during), ["t/4@0#1:false", "t/4@1#1:false", "t/4@2#1:false", "t/4@3#1:false", "t/4@2#2:false"]);
    assert.equal(seen[1].after, "t/4@1#1:false", "a kept record's context keeps its fields after the call");
    assert.equal(kept[1].signal.aborted, false);
    client.sink.lost([{ topic: "t", partition: 4 }]);
    assert.equal(kept[1].signal.aborted, true, "the signal of a record still in flight aborts when its partition is lost");
    assert.equal(kept[0].signal.aborted, true, "contexts of one lane share its signal");
    await c.shutdown();
  });
});
