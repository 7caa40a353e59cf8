// The batch handler: batches of started records with per-record results. A key is never in
// two running batches; only failed records retry; completions and commits are exact.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type BatchContext,
  InvalidArgumentError,
  ParallelConsumer,
  type RetryEvent,
} from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

const tps = (n: number) => range(0, n).map((partition) => ({ topic: "t", partition }));

describe("batch handler", () => {
  test("options: maxRecords an integer ≥ 1, maxWaitMs ≥ 0, a handler; not with handler; with transactional", () => {
    const client = new MemoryClient();
    const make = (o: object) => new ParallelConsumer<Msg>(client, o as never);
    const h = () => {};
    for (const bad of [0, 1.5, -1, "3"]) assert.throws(() => make({ batch: { maxRecords: bad, handler: h } }), (e: unknown) => e instanceof InvalidArgumentError && /batch\.maxRecords/.test((e as Error).message));
    assert.throws(() => make({ batch: { maxRecords: 2, maxWaitMs: -1, handler: h } }), /batch\.maxWaitMs/);
    assert.throws(() => make({ batch: { maxRecords: 2 } }), /batch\.handler must be a function/);
    assert.throws(() => make({ handler: h, batch: { maxRecords: 2, handler: h } }), /cannot both/);
    assert.throws(() => make({ batch: { maxRecords: 2, handler: h, maxRecrods: 3 } }), /maxRecrods.*maxRecords/);
    assert.throws(() => make({}), /handler must be a function/);
    make({ batch: { maxRecords: 2, handler: h } });
    // With exactly-once too (records[i].send: batch_transactions.test.ts).
    const port = { open: () => Promise.resolve([]), commit: () => Promise.resolve([]), release: () => Promise.resolve(), close: () => Promise.resolve() };
    make({ batch: { maxRecords: 2, handler: h }, transactional: { port } });
  });

  test("per-record results: only the failed records retry, the rest complete once; a throw fails the whole batch", async () => {
    const client = new MemoryClient();
    const calls = new Map<number, number>();
    const retries: RetryEvent[] = [];
    let threw = false;
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 8,
      retry: { retries: 3, initialDelayMs: 1, jitter: 0 },
      on: { retry: (e) => retries.push(e) },
      batch: {
        maxRecords: 4,
        maxWaitMs: 5,
        handler: (messages, { records }) => {
          for (const m of messages) calls.set(m.offset, (calls.get(m.offset) ?? 0) + 1);
          if (!threw && messages.some((m) => m.offset === 9)) {
            threw = true;
            throw new Error("whole batch");
          }
          return records.map((r) => (r.attempt === 1 && r.offset % 5 === 2 ? new Error(`bad ${r.offset}`) : undefined));
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(1));
    client.deliver("t", 0, range(0, 20));
    await until(() => c.metrics().partitions[0].safe === 20, 5_000);
    for (const o of [2, 7, 12, 17]) assert.ok((calls.get(o) ?? 0) >= 2, `${o} retried`);
    for (const o of range(0, 20)) if (o % 5 !== 2) assert.ok(calls.get(o)! <= 2, `${o} ran at most twice (once more only with the thrown batch)`);
    assert.ok(retries.some((r) => r.error instanceof Error && (r.error as Error).message === "whole batch"));
    assert.equal(c.metrics().completed, 20);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 20);
  });

  test("the direct start: whole batches run in the delivery; a waiting batch is filled first; a failed record retries alone", async () => {
    const client = new MemoryClient();
    const batches: number[][] = [];
    const calls = new Map<number, number>();
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "key",
      concurrency: 16,
      retry: { retries: 2, initialDelayMs: 1, jitter: 0 },
      batch: {
        maxRecords: 4,
        maxWaitMs: 200, // a partial batch waits for more (here: the next delivery, at once)
        handler: (messages, { records }) => {
          batches.push(records.map((r) => r.offset));
          for (const m of messages) calls.set(m.offset, (calls.get(m.offset) ?? 0) + 1);
          // nothing (all ok), or per-record results with offset 9 failing its first attempt
          return records.some((r) => r.offset === 9 && r.attempt === 1) ? records.map((r) => (r.offset === 9 ? new Error("once") : undefined)) : undefined;
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(1));
    const key = (o: number) => `k${o}`;
    client.deliver("t", 0, range(0, 6), undefined, key);
    assert.deepEqual(batches, [[0, 1, 2, 3]], "a whole batch ran in the delivery call; 4 and 5 wait for more");
    assert.equal(c.metrics().completed, 4);
    client.deliver("t", 0, range(6, 10), undefined, key);
    assert.deepEqual(batches, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]], "the waiting batch filled first, then whole batches");
    await until(() => c.metrics().completed === 16, 2_000, "16 completed");
    assert.deepEqual(batches.at(-1), [9], "only the failed record ran again");
    assert.deepEqual([...calls].filter(([, n]) => n > 1).map(([o]) => o), [9]);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 16);
  });

  test("a batch's context and its records have one class whether the batch started in the delivery or was gathered, with this attempt's fields", async () => {
    const client = new MemoryClient();
    const seen: Array<{ context: object; record: object; fields: string[] }> = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "key",
      concurrency: 16,
      retry: { retries: 2, initialDelayMs: 1, jitter: 0 },
      batch: {
        maxRecords: 4,
        maxWaitMs: 1,
        handler: (messages, context) => {
          const { records } = context;
          seen.push({
            context: Object.getPrototypeOf(context),
            record: Object.getPrototypeOf(records[0]),
            fields: records.map((r, i) => `${r.topic}/${r.partition}@${r.offset}#${r.attempt}:${r.signal.aborted}:${messages[i].offset === r.offset}`),
          });
          return records.map((r) => (r.offset === 2 && r.attempt === 1 ? new Error("once") : undefined));
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(2));
    const key = (o: number) => `k${o}`;
    client.deliver("t", 1, range(0, 6), undefined, key); // [0..3] in the delivery; 4, 5 gathered; 2 retries gathered
    await until(() => c.metrics().completed === 6, 2_000, "6 completed");
    await c.shutdown();
    assert.deepEqual(seen.map((s) => s.fields), [
      ["t/1@0#1:false:true", "t/1@1#1:false:true", "t/1@2#1:false:true", "t/1@3#1:false:true"],
      ...seen.slice(1).map((s) => s.fields), // the gathered batches, checked below
    ]);
    const later = seen.slice(1).flatMap((s) => s.fields).sort();
    assert.deepEqual(later, ["t/1@2#2:false:true", "t/1@4#1:false:true", "t/1@5#1:false:true"], "the retry says attempt 2");
    for (const s of seen) {
      assert.equal(s.context, seen[0].context, "one context class");
      assert.equal(s.record, seen[0].record, "one record-context class");
    }
  });

  test("an async handler's batches stay whole: a settled batch's records all end before new ones start", async () => {
    const client = new MemoryClient();
    const sizes: number[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 8,
      batch: {
        maxRecords: 8,
        handler: async (messages) => {
          sizes.push(messages.length);
          await sleep(1);
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(1));
    client.deliver("t", 0, range(0, 64));
    await until(() => c.metrics().completed === 64, 5_000, "64 completed");
    // Each completion starting a record at once would flush batches of one after the first.
    assert.deepEqual(sizes, [8, 8, 8, 8, 8, 8, 8, 8]);
    await c.shutdown();
  });

  test("a result that is not nothing or an array of the batch's length fails the batch with a typed error", async () => {
    const client = new MemoryClient();
    const errors: unknown[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      retry: { retries: 0 },
      on: { error: (e) => errors.push(e.error) },
      batch: { maxRecords: 3, handler: () => [undefined] as const },
    });
    await c.start();
    client.sink.assigned(tps(1));
    client.deliver("t", 0, range(0, 3));
    await until(() => errors.length > 0);
    assert.match(String((errors[0] as { cause?: unknown }).cause), /array of 3 results/);
    await c.shutdown(0);
  });

  test("property: a key is never in two running batches nor twice in one; batches within bounds; completions and commits exact (sync and async handlers)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        fc.boolean(),
        async (keys, maxRecords, concurrency, failFirst, sync) => {
          const client = new MemoryClient();
          const runningKeys = new Set<string>();
          const order = new Map<string, number[]>();
          const done = new Map<number, number>();
          let violation = "";
          const c = new ParallelConsumer<Msg>(client, {
            engine: "js",
            ordering: "key",
            concurrency,
            retry: { retries: 2, initialDelayMs: 1, jitter: 0 },
            batch: {
              maxRecords,
              maxWaitMs: 1,
              // Sync: the batch's results come back in the call (the direct start runs whole batches of a delivery).
              handler: (messages, ctx: BatchContext) => {
                if (messages.length > Math.min(maxRecords, concurrency)) violation ||= `batch of ${messages.length}`;
                const mine = messages.map((m) => `${ctx.records[messages.indexOf(m)].partition}:${m.key}`);
                for (const k of mine) {
                  if (runningKeys.has(k)) violation ||= `key ${k} in two running batches or twice in one`;
                  runningKeys.add(k);
                }
                const results = () => ctx.records.map((r, i) => {
                  if (failFirst[r.offset] && r.attempt === 1) return new Error("once");
                  const k = mine[i];
                  (order.get(k) ?? order.set(k, []).get(k)!).push(r.offset);
                  done.set(r.partition * 1_000 + r.offset, (done.get(r.partition * 1_000 + r.offset) ?? 0) + 1);
                  return undefined;
                });
                if (sync) {
                  for (const k of mine) runningKeys.delete(k);
                  const r = results();
                  return r.some((x) => x instanceof Error) ? r : undefined; // nothing = all succeeded
                }
                return sleep(Math.random() * 2).then(() => {
                  for (const k of mine) runningKeys.delete(k);
                  return results();
                });
              },
            },
          });
          await c.start();
          client.sink.assigned(tps(2));
          client.deliver("t", 0, range(0, keys.length), undefined, (o) => `k${keys[o]}`);
          client.deliver("t", 1, range(0, keys.length), undefined, (o) => `k${keys[(o + 1) % keys.length]}`);
          await until(() => c.metrics().completed === 2 * keys.length, 10_000, "every record");
          assert.equal(violation, "");
          assert.equal(done.size, 2 * keys.length);
          assert.ok([...done.values()].every((n) => n === 1), "each record succeeded once");
          for (const offsets of order.values()) assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), "offset order within a key");
          await c.shutdown();
          assert.equal(client.committed.get("t/0"), keys.length);
          assert.equal(client.committed.get("t/1"), keys.length);
        },
      ),
      { numRuns: 30 },
    );
  });
});
