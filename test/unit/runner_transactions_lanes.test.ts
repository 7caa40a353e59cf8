// The exactly-once mode's producers per lane, over a transactional port whose opens wait
// until the test settles them (or their signal aborts, as the KafkaJS port's retry loop
// does): an open stops for exactly the lanes that ended while it ran, a cooperative
// revoke releases the producers of exactly the lanes it ended, never the producer of a
// lane assigned again meanwhile, and a transaction that fails during a revoke's drain
// ends its partition rather than opening it again. The ownership gate: a partition reset
// after a failed transaction makes no producer until the member is known to still own it
// (an answered heartbeat sent after the failure, or a new assignment that keeps it).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type CommittedPosition,
  type ErrorEvent,
  type OpenPartition,
  ParallelConsumer,
  type PartitionTransaction,
  type TopicPartition,
  type TransactionalPort,
  type TransactionOutcome,
} from "../../core/mod.ts";
import { MemoryClient, type Msg, sleep, until } from "./runner_client.ts";

const tp = (partition: number): TopicPartition => ({ topic: "t", partition });
const names = (ps: readonly TopicPartition[]): string[] => ps.map((p) => `${p.topic}/${p.partition}`).sort();

/** One call of `open`: pending until the test resolves it or its signal aborts. */
interface PendingOpen {
  readonly partitions: readonly OpenPartition[];
  readonly signal: AbortSignal;
  settled: boolean;
  resolve(): void;
}

/** Records opens, transactions and releases; opens wait for the test. */
class WaitingPort implements TransactionalPort {
  readonly opens: PendingOpen[] = [];
  readonly released: string[] = [];
  readonly committed: PartitionTransaction[] = [];
  /** Opens resolve at once (no waiting). */
  eager = false;
  /** Commits wait until the test settles them (`true`: committed, `false`: aborted). */
  holdCommits = false;
  readonly heldCommits: Array<(ok: boolean) => void> = [];

  open(partitions: readonly OpenPartition[], signal: AbortSignal): Promise<readonly CommittedPosition[]> {
    return new Promise((resolve, reject) => {
      const positions = partitions.map((p) => ({ topic: p.topic, partition: p.partition, offset: undefined, metadata: undefined }));
      const o: PendingOpen = {
        partitions: [...partitions],
        signal,
        settled: false,
        resolve: () => {
          if (o.settled) return;
          o.settled = true;
          resolve(positions);
        },
      };
      this.opens.push(o);
      if (signal.aborted) {
        o.settled = true;
        reject(new Error("the partitions ended before their producers were open"));
        return;
      }
      signal.addEventListener("abort", () => {
        if (o.settled) return;
        o.settled = true;
        reject(new Error("the partitions ended before their producers were open"));
      }, { once: true });
      if (this.eager) o.resolve();
    });
  }

  /** The opens still running (neither resolved nor stopped by their signal). */
  running(): PendingOpen[] {
    return this.opens.filter((o) => !o.settled);
  }

  commit(txs: readonly PartitionTransaction[]): Promise<readonly TransactionOutcome[]> {
    const settle = (ok: boolean): readonly TransactionOutcome[] => {
      if (ok) this.committed.push(...txs);
      return txs.map(() => (ok ? { ok: true as const } : { ok: false as const, fenced: false, error: new Error("simulated abort") }));
    };
    if (!this.holdCommits) return Promise.resolve(settle(true));
    return new Promise((resolve) => this.heldCommits.push((ok) => resolve(settle(ok))));
  }

  release(partitions: readonly TopicPartition[]): Promise<void> {
    this.released.push(...names(partitions));
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function consumer(client: MemoryClient, port: WaitingPort, errors: ErrorEvent[], handler: (m: Msg) => void | Promise<void> = () => {}) {
  return new ParallelConsumer<Msg>(client, {
    engine: "js",
    ordering: "unordered",
    transactional: { port },
    commit: { intervalMs: 5 },
    drainTimeoutMs: 2_000,
    on: { error: (e) => errors.push(e) },
    handler,
  });
}

describe("runner: exactly-once producers per lane", () => {
  for (const gone of [0, 1]) {
    test(`an open stops for the lane that ended (partition ${gone} of 2) and carries on for the other`, async () => {
      const client = new MemoryClient();
      const port = new WaitingPort();
      const errors: ErrorEvent[] = [];
      const c = consumer(client, port, errors);
      await c.start();
      client.sink.assigned([tp(0), tp(1)]);
      assert.equal(port.opens.length, 1);
      assert.deepEqual(names(port.opens[0].partitions), ["t/0", "t/1"]);
      const kept = 1 - gone;
      client.sink.lost([tp(gone)]);
      // No open runs on for the ended partition (it would fence its next owner) ...
      await until(() => port.running().every((o) => !names(o.partitions).includes(`t/${gone}`)), 1_000, `no open for t/${gone}`);
      // ... and one still runs for the other, which stays held until it is open.
      const left = port.running();
      assert.equal(left.length, 1, "one open still runs");
      assert.deepEqual(names(left[0].partitions), [`t/${kept}`]);
      assert.ok(client.paused.has(`t/${kept}`), "held until its producer is open");
      left[0].resolve();
      await until(() => !client.paused.has(`t/${kept}`), 1_000, `t/${kept} released`);
      assert.ok(client.deliver("t", kept, [0, 1, 2]), "the kept partition takes batches");
      await until(() => port.committed.some((t) => t.partition === kept && t.offset === 3), 1_000, "a transaction at 3");
      assert.deepEqual(errors.filter((e) => e.kind === "committed-read"), [], "no committed-read error: the kept lane opened");
      await c.shutdown(100);
    });
  }

  test("a cooperative revoke releases the producers of the lanes it ends, not of a lane assigned again during the drain", async () => {
    const client = new MemoryClient();
    const port = new WaitingPort();
    port.eager = true;
    const errors: ErrorEvent[] = [];
    let unblock!: () => void;
    const blocked = new Promise<void>((r) => (unblock = r));
    const c = consumer(client, port, errors, (m) => (m.offset === 0 ? blocked : undefined));
    await c.start();
    client.sink.assigned([tp(0), tp(1)], undefined, true);
    await until(() => !client.paused.has("t/0") && !client.paused.has("t/1"), 1_000, "opened");
    assert.ok(client.deliver("t", 0, [0]));
    // Both revoked; t/0 drains (its record runs), is lost meanwhile and assigned again.
    const revoke = client.sink.revoking([tp(0), tp(1)]);
    client.sink.lost([tp(0)]);
    assert.deepEqual(port.released.sort(), ["t/0"], "the lost lane's producer is released");
    client.sink.assigned([tp(0)], undefined, true);
    await until(() => !client.paused.has("t/0"), 1_000, "t/0 opened again");
    const opened = port.opens.length;
    unblock();
    await revoke;
    assert.deepEqual(port.released.sort(), ["t/0", "t/1"], "the revoke releases t/1 only: t/0's producer is the new lane's");
    assert.equal(port.opens.length, opened, "nothing reopened");
    assert.ok(client.deliver("t", 0, [1, 2]), "the new t/0 lane takes batches");
    await until(() => port.committed.some((t) => t.partition === 0 && t.offset === 3), 1_000, "a transaction at 3");
    await c.shutdown(100);
  });

  for (const cooperative of [true, false]) {
    test(`a transaction that fails during a revoke's drain ends the partition instead of opening it again (${cooperative ? "cooperative" : "eager"})`, async () => {
      const client = new MemoryClient();
      const port = new WaitingPort();
      port.eager = true;
      const errors: ErrorEvent[] = [];
      const c = consumer(client, port, errors);
      await c.start();
      client.sink.assigned([tp(0)], undefined, cooperative);
      await until(() => !client.paused.has("t/0"), 1_000, "opened");
      port.holdCommits = true;
      assert.ok(client.deliver("t", 0, [0, 1, 2]));
      await until(() => port.heldCommits.length > 0, 1_000, "a transaction in flight");
      const revoke = client.sink.revoking(cooperative ? [tp(0)] : undefined);
      port.heldCommits.shift()!(false); // the transaction in flight when the revoke began aborts
      await until(() => port.released.includes("t/0"), 1_000, "t/0 released");
      port.holdCommits = false;
      while (port.heldCommits.length > 0) port.heldCommits.shift()!(true);
      await revoke;
      assert.equal(port.opens.length, 1, "the partition being revoked is not opened (fenced) again");
      assert.deepEqual(port.released, ["t/0"], "its producer is released once");
      assert.equal(client.deliver("t", 0, [0, 1, 2]), false, "no lane takes the revoked partition's batches");
      assert.equal(c.metrics().transactions!.resets, 1);
      // The next assignment keeps it: it opens anew and redoes the records from the committed offset.
      client.sink.assigned([tp(0)], undefined, cooperative);
      await until(() => !client.paused.has("t/0"), 1_000, "opened again");
      assert.equal(port.opens.length, 2);
      assert.ok(client.deliver("t", 0, [0, 1, 2]), "the new lane takes the batch again");
      await until(() => port.committed.some((t) => t.partition === 0 && t.offset === 3), 1_000, "a transaction at 3");
      await c.shutdown(100);
    });
  }

  test("a woken zombie: partitions reset after failed transactions open no producer; the rejoin opens only what the new generation gives", async () => {
    const client = new MemoryClient();
    const port = new WaitingPort();
    port.eager = true;
    const errors: ErrorEvent[] = [];
    const c = consumer(client, port, errors);
    await c.start();
    client.sink.assigned([tp(0), tp(1)]);
    await until(() => !client.paused.has("t/0") && !client.paused.has("t/1"), 1_000, "opened");
    port.holdCommits = true;
    assert.ok(client.deliver("t", 0, [0, 1, 2]));
    assert.ok(client.deliver("t", 1, [0, 1, 2]));
    await until(() => port.heldCommits.length > 0, 1_000, "a commit cycle in flight");
    port.holdCommits = false;
    port.heldCommits.shift()!(false); // both transactions refused (the broker fenced the zombie)
    await until(() => c.metrics().transactions!.resets === 2, 1_000, "both partitions reset");
    await sleep(20);
    assert.equal(port.opens.length, 1, "no producer made for a reset partition: it could fence the rightful owner");
    assert.ok(client.paused.has("t/0") && client.paused.has("t/1"), "held: no batch taken");
    assert.equal(c.metrics().transactions!.waiting, 2);
    assert.equal(client.deliver("t", 0, [0, 1, 2]), false, "a held partition takes no batch");
    // Its heartbeat is refused (its session expired); it rejoins and is given t/1 only.
    client.sink.assigned([tp(1)]);
    await until(() => port.opens.length === 2, 1_000, "the new assignment opened");
    assert.deepEqual(names(port.opens[1].partitions), ["t/1"]);
    await sleep(2);
    client.sink.owned!(Date.now()); // the new generation's heartbeat: t/0 is not in it
    await sleep(20);
    assert.equal(port.opens.length, 2, "t/0, no longer ours, was never opened again");
    assert.equal(c.metrics().transactions!.waiting, 0);
    assert.ok(client.deliver("t", 1, [0, 1, 2]), "t/1 takes batches in the new generation");
    await until(() => port.committed.some((t) => t.partition === 1 && t.offset === 3), 1_000, "a transaction at 3");
    await c.shutdown(100);
  });

  test("an incremental assignment confirms the reset partitions it keeps: they open", async () => {
    const client = new MemoryClient();
    const port = new WaitingPort();
    port.eager = true;
    const errors: ErrorEvent[] = [];
    const c = consumer(client, port, errors);
    await c.start();
    client.sink.assigned([tp(0)], undefined, true);
    await until(() => !client.paused.has("t/0"), 1_000, "opened");
    port.holdCommits = true;
    assert.ok(client.deliver("t", 0, [0, 1, 2]));
    await until(() => port.heldCommits.length > 0, 1_000, "a transaction in flight");
    port.holdCommits = false;
    port.heldCommits.shift()!(false);
    await until(() => c.metrics().transactions!.resets === 1, 1_000, "reset");
    await sleep(20);
    assert.equal(port.opens.length, 1, "held, not opened");
    client.sink.assigned([tp(1)], undefined, true); // a new generation that keeps t/0
    await until(() => !client.paused.has("t/0") && !client.paused.has("t/1"), 1_000, "both open");
    assert.deepEqual(port.opens.map((o) => names(o.partitions)).slice(1).flat().sort(), ["t/0", "t/1"]);
    assert.ok(client.deliver("t", 0, [0, 1, 2]), "t/0 takes its batch again");
    await until(() => port.committed.some((t) => t.partition === 0 && t.offset === 3), 1_000, "a transaction at 3");
    await c.shutdown(100);
  });
});
