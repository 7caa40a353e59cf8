// The runner under a cooperative (incremental) rebalance, as the Confluent binding drives
// it: only the revoked partitions drain and end; an incremental assignment adds lanes and
// leaves the partitions that stay put untouched (in-flight work, its tracker, commits).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ParallelConsumer } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

const tp = (partition: number) => ({ topic: "t", partition });

describe("runner: incremental assignments", () => {
  for (const incremental of [true, false]) {
    test(`a partition that stays put keeps its in-flight work (incremental: ${incremental})`, async () => {
      const client = new MemoryClient();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const ran: string[] = [];
      const consumer = new ParallelConsumer<Msg>(client, {
        ordering: "partition",
        drainTimeoutMs: 200,
        handler: async (m) => {
          ran.push(m.value);
          if (m.value === "t/0@5") await gate; // in flight across the rebalance
        },
      });
      await consumer.start();
      client.sink.assigned([tp(0), tp(1)]);
      assert.ok(client.deliver("t", 0, range(0, 10)));
      assert.ok(client.deliver("t", 1, range(0, 4)));
      await until(() => ran.includes("t/0@5") && ran.includes("t/1@3"), 1_000, "both partitions ran");
      // The cooperative rebalance: t/1 leaves (drained, final commit), t/2 arrives.
      await client.sink.revoking([tp(1)]);
      assert.equal(client.committed.get("t/1"), 4, "the revoked partition's final commit");
      client.sink.assigned(incremental ? [tp(2)] : [tp(0), tp(2)], undefined, incremental);
      assert.ok(client.deliver("t", 2, range(0, 3)));
      release();
      if (incremental) {
        await until(() => client.committed.get("t/0") === 10, 1_000, "t/0 committed to 10");
        assert.equal(consumer.metrics().partitions.find((p) => p.partition === 0)?.safe, 10);
        assert.equal(ran.filter((v) => v === "t/0@6").length, 1, "t/0 went on without redelivery");
      } else {
        // An eager assignment without a revoke of t/0 ends it: it is lost, and its records are redone.
        await until(() => client.committed.get("t/2") === 3, 1_000, "t/2 committed");
        assert.ok((client.committed.get("t/0") ?? 0) <= 5, "nothing of t/0 above the in-flight record is committed");
        assert.equal(client.deliver("t", 0, range(5, 5)), true, "t/0 starts over in its new assignment");
      }
      await until(() => client.committed.get("t/2") === 3, 1_000, "t/2 committed");
      assert.equal(client.committed.get("t/1"), 4, "the revoked partition is never committed again");
      await consumer.shutdown(100);
    });
  }

  test("an empty incremental assignment changes nothing", async () => {
    const client = new MemoryClient();
    const consumer = new ParallelConsumer<Msg>(client, { handler: () => {} });
    await consumer.start();
    client.sink.assigned([tp(0)]);
    assert.ok(client.deliver("t", 0, range(0, 3)));
    client.sink.assigned([], undefined, true);
    client.sink.assigned([tp(0)], undefined, true); // already assigned: kept as it is
    assert.ok(client.deliver("t", 0, range(3, 3)), "the same assignment takes the next batch");
    await until(() => client.committed.get("t/0") === 6, 1_000, "committed to 6");
    await consumer.shutdown(100);
  });
});
