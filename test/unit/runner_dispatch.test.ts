// The runner's dispatching against an in-memory client: registration before dispatch,
// the three ordering modes, the concurrency and per-partition bounds, backpressure.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ParallelConsumer, type ParallelConsumerOptions, type PauseEvent, type RecordContext } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

function consumer(client: MemoryClient, options: Omit<ParallelConsumerOptions<Msg>, "engine">): ParallelConsumer<Msg> {
  return new ParallelConsumer(client, { engine: "js", commit: { intervalMs: 5 }, ...options });
}

const tps = (topic: string, n: number) => range(0, n).map((partition) => ({ topic, partition }));

describe("runner: dispatching", () => {
  test("a batch is registered whole before any of its records runs", async () => {
    const client = new MemoryClient();
    const seen: Array<number | undefined> = [];
    const c = consumer(client, {
      ordering: "unordered",
      handler: () => {
        // Every record of the batch is delivered (registered) when the first one runs.
        seen.push(c.metrics().partitions[0].delivered);
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 1));
    assert.equal(client.deliver("t", 0, [5, 6, 9], 12), true);
    await until(() => seen.length === 3);
    assert.deepEqual(seen, [12, 12, 12]);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 12);
  });

  test("partition ordering: one record at a time per partition, in offset order; partitions in parallel", async () => {
    const client = new MemoryClient();
    const order = new Map<number, number[]>();
    const running = new Map<number, number>();
    let maxPerPartition = 0, maxTotal = 0, total = 0;
    const c = consumer(client, {
      ordering: "partition",
      concurrency: 8,
      handler: async (_m, { partition, offset }: RecordContext) => {
        running.set(partition, (running.get(partition) ?? 0) + 1);
        total++;
        maxPerPartition = Math.max(maxPerPartition, running.get(partition)!);
        maxTotal = Math.max(maxTotal, total);
        await sleep(Math.random() * 2);
        (order.get(partition) ?? order.set(partition, []).get(partition)!).push(offset);
        running.set(partition, running.get(partition)! - 1);
        total--;
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 4));
    for (let p = 0; p < 4; p++) client.deliver("t", p, range(0, 30));
    for (let p = 0; p < 4; p++) client.deliver("t", p, range(30, 30));
    await until(() => [...order.values()].reduce((n, o) => n + o.length, 0) === 240, 5_000);
    assert.equal(maxPerPartition, 1);
    assert.ok(maxTotal > 1, "partitions ran in parallel");
    for (let p = 0; p < 4; p++) assert.deepEqual(order.get(p), range(0, 60));
    await c.shutdown();
    for (let p = 0; p < 4; p++) assert.equal(client.committed.get(`t/${p}`), 60);
  });

  test("key ordering: at most one in-flight record per key, offset order within a key", async () => {
    const client = new MemoryClient();
    const perKey = new Map<string, number[]>();
    const busy = new Set<string>();
    let violations = 0, maxTotal = 0, total = 0;
    const c = consumer(client, {
      ordering: "key",
      concurrency: 16,
      handler: async (m: Msg, { partition }) => {
        const key = `${partition}:${m.key}`; // keys order records within their partition
        if (busy.has(key)) violations++;
        busy.add(key);
        total++;
        maxTotal = Math.max(maxTotal, total);
        await sleep(Math.random() * 2);
        (perKey.get(key) ?? perKey.set(key, []).get(key)!).push(m.offset);
        busy.delete(key);
        total--;
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 2));
    const keyOf = (o: number) => `k${(o * 7) % 10}`;
    client.deliver("t", 0, range(0, 200), 200, keyOf);
    client.deliver("t", 1, range(0, 200), 200, (o) => `k${o % 3}`);
    await until(() => [...perKey.values()].reduce((n, o) => n + o.length, 0) === 400, 5_000);
    assert.equal(violations, 0);
    assert.ok(maxTotal > 1 && maxTotal <= 16, `ran ${maxTotal} at once`);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 200);
    assert.equal(client.committed.get("t/1"), 200);
  });

  test("key ordering holds per key within a partition (exact order check)", async () => {
    const client = new MemoryClient();
    const seen: Array<[string, number]> = [];
    const c = consumer(client, {
      ordering: "key",
      concurrency: 32,
      handler: async (m: Msg) => {
        await sleep(Math.random() * 3);
        seen.push([m.key!, m.offset]);
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 1));
    const keyOf = (o: number) => `k${(o * 31) % 13}`;
    client.deliver("t", 0, range(0, 100), 100, keyOf);
    client.deliver("t", 0, range(100, 100), 200, keyOf);
    await until(() => seen.length === 200, 5_000);
    const byKey = new Map<string, number[]>();
    for (const [key, o] of seen) (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(o);
    for (const [key, offsets] of byKey) {
      assert.deepEqual(offsets, range(0, 200).filter((o) => keyOf(o) === key), `key ${key}`);
    }
    await c.shutdown();
  });

  test("key ordering: a partition stopped while a keyed record runs goes idle once it finished (the shutdown does not wait out its grace)", async () => {
    const client = new MemoryClient();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let signal: AbortSignal | undefined;
    const stops: unknown[] = [];
    const c = consumer(client, {
      ordering: "key",
      retry: { retries: 0, onExhausted: "stop" },
      on: { error: (e) => stops.push(e.kind) },
      handler: async (m: Msg, ctx) => {
        if (m.offset !== 0) throw new Error("fails for good");
        signal = ctx.signal;
        await gate; // offset 0 (key k0) still runs when offset 1 stops the partition
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 1));
    client.deliver("t", 0, range(0, 2), 2, (o) => `k${o}`);
    await until(() => stops.length > 0);
    assert.deepEqual(stops, ["partition-stopped"]);
    const done = c.shutdown(2_000);
    await sleep(5);
    release();
    await done;
    // Its key was given back when it settled: the lane went idle and ended, rather than
    // staying held until the grace expired and every lane was abandoned.
    assert.equal((signal!.reason as Error).message, "partition t/0 is no longer assigned");
    assert.equal(client.committed.get("t/0"), 1);
  });

  test("unordered: concurrency and the per-partition in-flight bound are never exceeded", async () => {
    const client = new MemoryClient();
    const running = new Map<number, number>();
    let total = 0, maxTotal = 0, maxP = 0, done = 0;
    const c = consumer(client, {
      ordering: "unordered",
      concurrency: 10,
      maxInFlightPerPartition: 4,
      handler: async (_m, { partition }) => {
        total++;
        running.set(partition, (running.get(partition) ?? 0) + 1);
        maxTotal = Math.max(maxTotal, total);
        maxP = Math.max(maxP, running.get(partition)!);
        await sleep(1);
        total--;
        running.set(partition, running.get(partition)! - 1);
        done++;
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 3));
    for (let p = 0; p < 3; p++) client.deliver("t", p, range(0, 100));
    await until(() => done === 300, 5_000);
    assert.equal(maxTotal, 10);
    assert.equal(maxP, 4);
    await c.shutdown();
  });

  test("backpressure: pause at the high mark, refuse batches while paused, resume at the low mark", async () => {
    const client = new MemoryClient();
    const pauses: PauseEvent[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = consumer(client, {
      ordering: "partition",
      highWaterMark: 100,
      lowWaterMark: 20,
      maxBuffered: 1_000,
      handler: async (m: Msg, { partition }) => {
        if (partition === 0 && m.offset === 0) await gate; // the head stalls: everything behind it is retained
      },
      on: { pause: (e) => pauses.push(e) },
    });
    await c.start();
    client.sink.assigned(tps("t", 2));
    assert.equal(client.deliver("t", 0, range(0, 60)), true);
    assert.equal(client.paused.has("t/0"), false);
    assert.equal(client.deliver("t", 0, range(60, 60)), true); // 120 retained ≥ 100: pause
    assert.ok(client.paused.has("t/0"));
    assert.equal(pauses.length, 1);
    assert.equal(pauses[0].reason, "high-water-mark");
    assert.equal(client.deliver("t", 0, range(120, 10)), false, "a paused partition's batch is refused");
    // the other partition keeps flowing
    assert.equal(client.deliver("t", 1, range(0, 50)), true);
    await until(() => c.metrics().partitions.find((p) => p.partition === 1)!.safe === 50);
    assert.equal(c.metrics().partitions.find((p) => p.partition === 0)!.retained, 120);
    release();
    await until(() => !client.paused.has("t/0"));
    assert.deepEqual(client.pauseLog, ["pause t/0", "resume t/0"]);
    assert.equal(client.deliver("t", 0, range(120, 10)), true);
    await until(() => c.metrics().partitions.find((p) => p.partition === 0)!.safe === 130);
    assert.ok(c.metrics().partitions[0].pausedMs > 0);
    await c.shutdown();
  });

  test("backpressure: the total bound pauses every partition, resumes at half", async () => {
    const client = new MemoryClient();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = consumer(client, {
      ordering: "partition",
      highWaterMark: 1_000,
      maxBuffered: 100,
      handler: async () => {
        await gate;
      },
    });
    await c.start();
    client.sink.assigned(tps("t", 3));
    client.deliver("t", 0, range(0, 40));
    client.deliver("t", 1, range(0, 40));
    assert.equal(client.paused.size, 0);
    client.deliver("t", 2, range(0, 40));
    assert.deepEqual([...client.paused].sort(), ["t/0", "t/1", "t/2"]);
    release();
    await until(() => client.paused.size === 0);
    await c.shutdown();
  });
});
