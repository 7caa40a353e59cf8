// The batch handler in exactly-once mode, over the in-memory transactional port the
// runner's exactly-once tests use (test/unit/memory_port.ts). A batch may hold records of
// several partitions while transactions are per partition: each `records[i].send` stages
// outputs for record i alone, which join its own partition's transaction when it completes.
// Checked: a transaction holds the outputs of exactly the records its offset and completed
// set call finished, all of its own partition; a record failed by its result (or by a
// throw) drops its outputs and only it runs again; dead letters go in the transaction; a
// failed transaction redoes only its partition's records; every input ends with exactly one
// committed output (or dead letter).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { decodeCompletedSet, InvalidArgumentError, type OutputRecord, ParallelConsumer, type RecordContext } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";
import { MemoryPort } from "./memory_port.ts";

const tps = (n: number) => range(0, n).map((partition) => ({ topic: "t", partition }));
/** The input an output came from: its value is `t/<partition>@<offset>` (a `#attempt` may follow). */
const source = (o: OutputRecord): { partition: number; offset: number; input: string } => {
  const input = String(o.value).split("#")[0];
  const [, p, off] = /^t\/(\d+)@(\d+)$/.exec(input)!;
  return { partition: Number(p), offset: Number(off), input };
};

describe("batch handler, exactly-once", () => {
  test("outputs join their own record's partition transaction, only once the transaction claims that record", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    port.onOpen = (p) => void client.deliver("t", p.partition, range(0, 40));
    let held: (() => void) | undefined;
    let mixed = 0;
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 64,
      transactional: { port },
      commit: { intervalMs: 5 },
      batch: {
        maxRecords: 6, // 40 records a partition: a batch holds the last 4 of t/0 and the first 2 of t/1
        maxWaitMs: 2,
        handler: (messages, { records }) => {
          if (new Set(records.map((r) => r.partition)).size > 1) mixed++;
          records.forEach((r, i) => r.send!({ topic: "out", value: messages[i].value }));
          // The batch with t/0@5 is held back: its records stay unfinished while later ones complete.
          if (held === undefined && records.some((r) => r.partition === 0 && r.offset === 5)) {
            return new Promise<void>((resolve) => held = resolve);
          }
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(2));
    await until(() => held !== undefined && port.committed.get("t/1")?.offset === 40, 2_000, "t/1 committed while a t/0 batch is held");
    await sleep(20);
    assert.ok(mixed > 0, "some batch held records of both partitions");
    const check = (): void => {
      for (const t of port.transactions) {
        const d = t.metadata === undefined ? undefined : decodeCompletedSet("t", t.partition, t.offset, t.metadata);
        const claimed = (o: number): boolean => o < t.offset || (d?.ok === true && d.set.isFinished(o));
        for (const o of t.outputs) {
          const s = source(o);
          assert.equal(s.partition, t.partition, `output of ${s.input} in the transaction of t/${t.partition}`);
          assert.ok(claimed(s.offset), `output of ${s.input} in a commit at ${t.offset} that does not claim it`);
        }
      }
    };
    check();
    assert.ok((port.committed.get("t/0")?.offset ?? 0) <= 5, "t/0 not committed past its held record");
    const early = new Set(port.outputs.map((o) => source(o).input));
    assert.ok(!early.has("t/0@5"), "no output of a running record");
    held!();
    await until(() => port.committed.get("t/0")?.offset === 40, 2_000, "t/0 committed 40");
    check();
    const got = port.outputs.map((o) => source(o).input).sort();
    assert.deepEqual(got, [...range(0, 40).map((o) => `t/0@${o}`), ...range(0, 40).map((o) => `t/1@${o}`)].sort(), "every output once");
    await c.shutdown(100);
  });

  test("per-record results: a failed record's outputs are dropped and only it runs again; a throw drops the batch's; dead letters in the transaction", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    port.onOpen = (p) => void client.deliver("t", p.partition, range(0, 16));
    const calls = new Map<string, number>();
    let threw = false;
    let late: RecordContext | undefined;
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 16,
      transactional: { port },
      commit: { intervalMs: 5 },
      retry: { retries: 1, initialDelayMs: 1, jitter: 0, onExhausted: "dead-letter" },
      batch: {
        maxRecords: 6,
        maxWaitMs: 2,
        handler: (messages, { records }) => {
          late ??= records[0];
          for (const m of messages) calls.set(m.value, (calls.get(m.value) ?? 0) + 1);
          records.forEach((r, i) => r.send!({ topic: "out", value: `${messages[i].value}#${r.attempt}` }));
          if (!threw && records.some((r) => r.partition === 1 && r.offset === 9)) {
            threw = true;
            throw new Error("whole batch");
          }
          return records.map((r) =>
            r.offset === 5 && r.partition === 0 ? new Error("poison") : r.offset === 2 && r.attempt === 1 ? new Error("transient") : undefined
          );
        },
      },
    });
    await c.start();
    client.sink.assigned(tps(2));
    await until(() => port.committed.get("t/0")?.offset === 16 && port.committed.get("t/1")?.offset === 16, 2_000, "both committed 16");
    assert.throws(() => late!.send!({ topic: "out", value: "late" }), (e: unknown) => e instanceof InvalidArgumentError && /after the batch handler/.test((e as Error).message));
    const out = port.outputs.filter((o) => o.topic === "out");
    const letters = port.outputs.filter((o) => o.topic === "t.DLT");
    assert.deepEqual(letters.map((o) => o.value), ["t/0@5"], "the poison record's dead letter, in its transaction");
    const byInput = new Map<string, string[]>();
    for (const o of out) byInput.set(source(o).input, [...(byInput.get(source(o).input) ?? []), String(o.value)]);
    assert.equal(byInput.size, 31, "every input but the poison one has an output");
    assert.ok(!byInput.has("t/0@5"), "the poison record's failed attempts left no output");
    for (const [input, values] of byInput) assert.equal(values.length, 1, `${input}: ${values.join(", ")}`);
    assert.deepEqual(byInput.get("t/0@2"), ["t/0@2#2"], "the failed first attempt's output was dropped");
    assert.deepEqual(byInput.get("t/1@2"), ["t/1@2#2"]);
    assert.deepEqual(byInput.get("t/1@9"), ["t/1@9#2"], "the thrown batch's outputs were dropped");
    for (const [input, n] of calls) {
      const failedOnce = /@2$/.test(input) || byInput.get(input)?.[0].endsWith("#2");
      assert.equal(n, input === "t/0@5" ? 2 : failedOnce ? 2 : 1, `${input} ran ${n} times`);
    }
    assert.equal(c.metrics().deadLettered, 1);
    await c.shutdown(100);
  });

  test("a failed transaction redoes its partition while a batch of the old assignment still runs: that batch's outputs never commit", async () => {
    const client = new MemoryClient();
    const port = new MemoryPort();
    port.onOpen = (p, offset) => void client.deliver("t", p.partition, range(offset ?? 0, 8 - (offset ?? 0)), 8, (o) => `k${o % 4}`);
    port.fail = (_t, i) => i === 0; // the first transaction fails: the partition starts over as a new assignment
    let release: (() => void) | undefined;
    let oldSignal: AbortSignal | undefined;
    const overlap: string[] = []; // records of the new assignment that ran while the held batch did
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "key",
      concurrency: 8,
      transactional: { port },
      commit: { intervalMs: 3 },
      batch: {
        maxRecords: 4,
        maxWaitMs: 1,
        handler: async (messages, { records }) => {
          if (oldSignal === undefined && records[0].offset === 0) {
            // The first batch (t/0@0..3) is held while the first transaction fails.
            oldSignal = records[0].signal;
            records.forEach((r, i) => r.send!({ topic: "out", value: `${messages[i].value}#held` }));
            await new Promise<void>((resolve) => release = resolve);
            return;
          }
          if (release !== undefined && !oldSignal!.aborted) throw new Error("the held batch's assignment still runs");
          if (release !== undefined) overlap.push(...records.map((r) => `t/0@${r.offset}`));
          records.forEach((r, i) => r.send!({ topic: "out", value: `${messages[i].value}#${r.attempt}` }));
        },
      },
    });
    const beat = setInterval(() => client.sink?.owned?.(Date.now()), 3);
    try {
      await c.start();
      client.sink.assigned(tps(1));
      // The new assignment runs t/0@0..3 (the held batch's records and keys) while the held batch still runs.
      await until(() => ["t/0@0", "t/0@3"].every((r) => overlap.includes(r)), 2_000, "the new assignment ran t/0@0..3");
      assert.ok(oldSignal!.aborted, "the held batch's assignment ended");
      release!();
      await until(() => port.committed.get("t/0")?.offset === 8, 2_000, "t/0 committed 8");
      await sleep(10); // a late commit of the held batch's outputs would land here
      const values = port.outputs.map((o) => String(o.value)).sort();
      assert.deepEqual(values, range(0, 8).map((o) => `t/0@${o}#1`).sort(), "one output per input, none of the held batch");
      assert.equal(c.metrics().transactions!.resets, 1, "one reset");
    } finally {
      clearInterval(beat);
      await c.shutdown(100);
    }
  });

  test("property: over batches spanning partitions, failed records and failed transactions, each input has exactly one committed output", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.constantFrom("ok", "ok", "ok", "once", "poison"), { minLength: 30, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 3 }),
        async (partitions, n, maxRecords, concurrency, fate, failAt) => {
          const client = new MemoryClient();
          const port = new MemoryPort();
          const failing = new Set(failAt);
          port.fail = (_t, i) => failing.has(i);
          // The seek: after each open, deliver again from the committed offset.
          port.onOpen = (p, offset) => void client.deliver("t", p.partition, range(offset ?? 0, n - (offset ?? 0)), n, (o) => `k${o % 4}`);
          // Key order is a promise per assignment (docs/guarantees.md): a failed transaction
          // starts its partition over as a new assignment, whose records may run while the old
          // assignment's abandoned batch still does (its outputs never commit). So a running key
          // is told apart by its assignment, which a record's `signal` (its lane's) names.
          const assignments = new Map<AbortSignal, number>();
          const assignment = (s: AbortSignal): number => {
            let a = assignments.get(s);
            if (a === undefined) assignments.set(s, a = assignments.size);
            return a;
          };
          const runningKeys = new Map<string, string>();
          let violation = "";
          const c = new ParallelConsumer<Msg>(client, {
            engine: "js",
            ordering: "key",
            concurrency,
            transactional: { port },
            commit: { intervalMs: 3 },
            retry: { retries: 1, initialDelayMs: 1, jitter: 0, onExhausted: "dead-letter" },
            batch: {
              maxRecords,
              maxWaitMs: 1,
              handler: async (messages, { records }) => {
                const keys = messages.map((m, i) => `${records[i].partition}:${m.key} of assignment ${assignment(records[i].signal)}`);
                const batch = records.map((r) => `t/${r.partition}@${r.offset}#${r.attempt}`).join(" ");
                keys.forEach((k) => {
                  if (runningKeys.has(k)) violation ||= `key ${k} in two running batches or twice in one: [${batch}] and [${runningKeys.get(k)}]`;
                  runningKeys.set(k, batch);
                });
                records.forEach((r, i) => r.send!({ topic: "out", value: `${messages[i].value}#${r.attempt}` }));
                await sleep(Math.random() * 2);
                for (const k of keys) runningKeys.delete(k);
                return records.map((r) => {
                  const f = fate[r.offset];
                  return f === "poison" || (f === "once" && r.attempt === 1) ? new Error(f) : undefined;
                });
              },
            },
          });
          // The ownership gate: answered heartbeats let a reset partition open again.
          const beat = setInterval(() => client.sink?.owned?.(Date.now()), 3);
          try {
            await c.start();
            client.sink.assigned(tps(partitions));
            await until(() => range(0, partitions).every((p) => port.committed.get(`t/${p}`)?.offset === n), 10_000, "every partition committed to its end");
            assert.equal(violation, "");
            for (const t of port.transactions) {
              for (const o of t.outputs) assert.equal(source(o).partition, t.partition, `output of ${source(o).input} in t/${t.partition}'s transaction`);
            }
            const count = new Map<string, number>();
            for (const o of port.outputs) {
              const s = source(o);
              count.set(s.input, (count.get(s.input) ?? 0) + 1);
              assert.equal(o.topic, fate[s.offset] === "poison" ? "t.DLT" : "out", `${s.input}'s committed output (${o.topic} ${o.value})`);
              if (fate[s.offset] === "once") assert.ok(!String(o.value).endsWith("#1"), `${s.input}: the failed first attempt's output`);
            }
            assert.equal(count.size, partitions * n, "every input has a committed output");
            for (const [input, k] of count) assert.equal(k, 1, `${input}: ${k} committed outputs`);
            const failed = port.transactions.filter((_t, i) => failing.has(i)).length;
            await until(() => c.metrics().transactions!.aborted === failed, 1_000, `${failed} aborted transactions counted`);
          } finally {
            clearInterval(beat);
            await c.shutdown(100);
          }
        },
      ),
      // A failure shows its assertion, not only the counterexample.
      { numRuns: 25, includeErrorInReport: true },
    );
  });
});
