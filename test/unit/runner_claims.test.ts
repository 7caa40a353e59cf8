// The runner across a handover: the first owner's commits carry the completed set; the
// next owner, handed the committed offset and metadata at assignment, holds the partition
// until it has read them, then skips exactly the records the claim says are finished.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ClaimEvent, type CommitOffset, type CommittedPosition, InvalidArgumentError, ParallelConsumer } from "../../core/mod.ts";
import { CLAIM_READ_MS } from "../../core/consumer/commits/claims.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";
import { v1String } from "./completed_set_spec.ts";

const one = [{ topic: "t", partition: 0 }];

/** The newest commit of t/0 the client acknowledged. */
function lastCommit(client: MemoryClient): CommitOffset {
  for (let i = client.commits.length - 1; i >= 0; i--) {
    const c = client.commits[i].find((o) => o.topic === "t" && o.partition === 0);
    if (c) return c;
  }
  throw new Error("no commit of t/0");
}

/** A first owner's commit of t/0 at 3 whose completed set says 4..19 finished (offset 3 never does). */
async function firstOwnerCommit(): Promise<CommitOffset> {
  const a = new MemoryClient();
  const ca = new ParallelConsumer<Msg>(a, {
    engine: "wasm",
    ordering: "unordered",
    concurrency: 8,
    handler: (m) => (m.offset === 3 ? new Promise(() => {}) : undefined),
  });
  await ca.start();
  a.sink.assigned(one);
  a.deliver("t", 0, range(0, 20));
  await until(() => a.committed.get("t/0") === 3 && lastCommit(a).metadata !== undefined, 2_000, "A's commit at 3");
  const committed = lastCommit(a);
  assert.equal(committed.offset, 3);
  void ca.shutdown(10); // the stuck record stays unfinished
  return committed;
}

describe("runner: completed sets across a handover", () => {
  test("the next owner skips what the first finished above its commit, and runs the rest", async () => {
    const committed = await firstOwnerCommit();

    // Second owner, handed A's commit. Its handler records what runs.
    const b = new MemoryClient();
    const ran: number[] = [];
    const claims: ClaimEvent[] = [];
    let answer!: (p: readonly CommittedPosition[]) => void;
    const cb = new ParallelConsumer<Msg>(b, {
      engine: "js",
      ordering: "key",
      handler: (m) => void ran.push(m.offset),
      on: { claim: (e) => claims.push(e) },
    });
    await cb.start();
    b.sink.assigned(one, new Promise((r) => (answer = r)));
    assert.ok(b.paused.has("t/0"), "held at the client until the claim is read");
    assert.equal(b.deliver("t", 0, range(3, 17)), false, "no batch is taken before the claim is known");
    answer([{ topic: "t", partition: 0, offset: committed.offset, metadata: committed.metadata }]);
    await until(() => !b.paused.has("t/0"), 1_000, "released");
    assert.equal(claims.length, 1);
    assert.equal(claims[0].ignored, undefined);
    assert.equal(claims[0].finished, 16, "4..19 claimed finished");
    assert.ok(b.deliver("t", 0, range(3, 17), 20, (o) => `k${o % 3}`));
    await until(() => cb.metrics().partitions[0]?.safe === 20, 1_000, "B reaches 20");
    assert.deepEqual(ran, [3], "only the unfinished record ran again");
    assert.equal(cb.metrics().skipped, 16);
    await cb.shutdown();
    assert.equal(b.committed.get("t/0"), 20);
  });

  test("metadata that does not verify is ignored, with the reason: every record runs again", async () => {
    const b = new MemoryClient();
    const ran: number[] = [];
    const claims: ClaimEvent[] = [];
    const cb = new ParallelConsumer<Msg>(b, {
      engine: "js",
      ordering: "unordered",
      handler: (m) => void ran.push(m.offset),
      on: { claim: (e) => claims.push(e) },
    });
    await cb.start();
    b.sink.assigned(one, Promise.resolve([{ topic: "t", partition: 0, offset: 5, metadata: "AAAAAAAAAAAAAAAA" }]));
    await until(() => claims.length === 1, 1_000, "the claim event");
    assert.ok(claims[0].ignored && claims[0].ignored.length > 0, "says why");
    assert.ok(b.deliver("t", 0, range(5, 10)));
    await until(() => ran.length === 10, 1_000, "all ran");
    assert.equal(cb.metrics().skipped, 0);
    await cb.shutdown();
  });

  test("a version 1 string (CRC-32 check) is refused as no longer trusted: what it claims runs again", async () => {
    const b = new MemoryClient();
    const ran: number[] = [];
    const claims: ClaimEvent[] = [];
    const cb = new ParallelConsumer<Msg>(b, { engine: "js", ordering: "unordered", handler: (m) => void ran.push(m.offset), on: { claim: (e) => claims.push(e) } });
    await cb.start();
    const metadata = v1String(1, "1".repeat(8), "t", 0, 5); // version 1 wrote it: 5..12 finished
    b.sink.assigned(one, Promise.resolve([{ topic: "t", partition: 0, offset: 5, metadata }]));
    await until(() => claims.length === 1, 1_000, "the claim event");
    assert.match(claims[0].ignored ?? "", /format version 1 \(CRC-32 check\) is no longer trusted/);
    assert.equal(claims[0].finished, 0);
    assert.ok(b.deliver("t", 0, range(5, 10)));
    await until(() => ran.length === 10, 1_000, "all ran");
    assert.equal(cb.metrics().skipped, 0, "nothing skipped on its word");
    await cb.shutdown();
  });

  test("a failed read of the committed offsets only costs the claims", async () => {
    const b = new MemoryClient();
    const ran: number[] = [];
    const kinds: string[] = [];
    const cb = new ParallelConsumer<Msg>(b, {
      engine: "js",
      handler: (m) => void ran.push(m.offset),
      on: { error: (e) => kinds.push(e.kind) },
    });
    await cb.start();
    b.sink.assigned(one, Promise.reject(new Error("coordinator not available")));
    await until(() => !b.paused.has("t/0"), 1_000, "released");
    assert.deepEqual(kinds, ["committed-read"]);
    assert.ok(b.deliver("t", 0, range(0, 4)));
    await until(() => ran.length === 4, 1_000, "all ran");
    await cb.shutdown();
  });

  test("a read of the committed offsets that does not answer within the bound only costs the claims; a late answer is not used", async () => {
    const committed = await firstOwnerCommit();
    const b = new MemoryClient();
    const ran: number[] = [];
    const kinds: string[] = [];
    let answer!: (p: readonly CommittedPosition[]) => void;
    const cb = new ParallelConsumer<Msg>(b, {
      engine: "js",
      handler: (m) => void ran.push(m.offset),
      on: { error: (e) => kinds.push(e.kind) },
    });
    await cb.start();
    b.sink.assigned(one, new Promise((r) => (answer = r)));
    assert.ok(b.paused.has("t/0"), "held while the read is out");
    await until(() => !b.paused.has("t/0"), CLAIM_READ_MS + 3_000, "released after the bound");
    assert.deepEqual(kinds, ["committed-read"]);
    // The answer arrives late: its claim (4..19 finished) must not skip anything now.
    answer([{ topic: "t", partition: 0, offset: committed.offset, metadata: committed.metadata }]);
    await sleep(10);
    assert.ok(b.deliver("t", 0, range(3, 17)));
    await until(() => ran.length === 17, 1_000, "all ran");
    assert.equal(cb.metrics().skipped, 0);
    assert.deepEqual(kinds, ["committed-read"]);
    await cb.shutdown();
  });

  test("commit.metadata needs completedSet: false", async () => {
    const c = new MemoryClient();
    assert.throws(
      () => new ParallelConsumer<Msg>(c, { handler: () => {}, commit: { metadata: () => "x" } }),
      /completedSet: false/,
    );
    await sleep(0);
  });

  test("a completed-set budget the encoder would refuse fails the constructor, not every commit", () => {
    const c = new MemoryClient();
    assert.throws(
      () => new ParallelConsumer<Msg>(c, { handler: () => {}, commit: { completedSet: { budget: 70000 } } }),
      (e: unknown) => e instanceof InvalidArgumentError && /completedSet\.budget.*got 70000/.test(e.message),
    );
    assert.equal(c.commits.length, 0);
  });

  test("a partition lost and assigned again skips what this consumer finished before the loss", async () => {
    const c = new MemoryClient();
    c.commitImpl = () => Promise.reject(new Error("coordinator unavailable")); // nothing is ever acknowledged
    const ran: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const consumer = new ParallelConsumer<Msg>(c, {
      engine: "wasm",
      ordering: "unordered",
      handler: async (m) => {
        ran.push(m.offset);
        if (m.offset === 2) await gate;
      },
    });
    await consumer.start();
    c.sink.assigned(one);
    c.deliver("t", 0, range(0, 10));
    await until(() => ran.length === 10, 1_000, "all started");
    await sleep(5);
    c.sink.lost(); // e.g. the client crashed and will rejoin
    release();
    c.sink.assigned(one, Promise.resolve([{ topic: "t", partition: 0, offset: undefined, metadata: undefined }]));
    await until(() => !c.paused.has("t/0"), 1_000, "released");
    ran.length = 0;
    c.commitImpl = async () => {};
    assert.ok(c.deliver("t", 0, range(0, 10)));
    await until(() => consumer.metrics().partitions[0]?.safe === 10, 1_000, "10");
    assert.deepEqual(ran, [2], "only the record that was running at the loss runs again");
    assert.equal(consumer.metrics().skipped, 9);
    await consumer.shutdown();
  });

  test("the default completed-set budget leaves the broker's 4,096 bytes room for the NUL the bindings store after it", async () => {
    // Every other record of 40,000 unfinished: a set far over any budget, cut to the longest prefix that fits.
    const run = async (budget: number | undefined): Promise<string> => {
      const c = new MemoryClient();
      const consumer = new ParallelConsumer<Msg>(c, {
        ordering: "unordered",
        concurrency: 40_000,
        ...(budget !== undefined ? { commit: { completedSet: { budget } } } : {}),
        handler: (m) => (m.offset % 2 === 0 ? new Promise(() => {}) : undefined),
      });
      await consumer.start();
      c.sink.assigned(one);
      c.deliver("t", 0, range(0, 40_000));
      await until(() => c.commits.length > 0 && (lastCommit(c).metadata?.length ?? 0) > 1_000, 5_000, "a commit with a long completed set");
      await sleep(50);
      const metadata = lastCommit(c).metadata!;
      void consumer.shutdown(10);
      return metadata;
    };
    assert.equal((await run(undefined)).length, 4_095, "the default: 4,095 characters, + 1 NUL = the broker's 4,096");
    assert.equal((await run(4_096)).length, 4_096, "a budget given is used as given");
  });
});
