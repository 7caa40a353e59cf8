// The lag in metrics(): each partition's log end offset as the client reported it (with a
// batch, outside one, or from the client's offset query for partitions no fetch reports),
// `lag` = log end − committed (before the first commit: − where the assignment began
// reading), `processingLag` = delivered − safe, and the member's total.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type EndOffset, InvalidOffsetError, ParallelConsumer, type TopicPartition } from "../../core/mod.ts";
import { lagOf } from "../../core/consumer/dispatch/log_end.ts";
import { endOffsetOf, endOffsetsByTopic } from "../../adapters/shared/end_offsets.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

/** A memory client that answers the runner's end-offset queries from `ends`. */
class EndsClient extends MemoryClient {
  readonly ends = new Map<string, number>();
  readonly queried: string[][] = [];
  endOffsets(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]> {
    this.queried.push(partitions.map((p) => `${p.topic}/${p.partition}`));
    const out: EndOffset[] = [];
    for (const p of partitions) {
      const e = this.ends.get(`${p.topic}/${p.partition}`);
      if (e !== undefined) out.push({ topic: p.topic, partition: p.partition, endOffset: e });
    }
    return Promise.resolve(out);
  }
}

function consumerOver(client: MemoryClient, handler: (m: Msg) => Promise<void> | void = () => {}): ParallelConsumer<Msg> {
  return new ParallelConsumer(client, {
    engine: "js",
    ordering: "unordered",
    concurrency: 8,
    commit: { mode: "eager", intervalMs: 20 },
    handler,
  });
}

const part = (c: ParallelConsumer<Msg>, partition: number) => c.metrics().partitions.find((p) => p.partition === partition);

describe("lagOf", () => {
  test("log end − confirmed; before a commit, − where reading began; unknown without a log end or a base", () => {
    assert.equal(lagOf(120, 100, 40), 20);
    assert.equal(lagOf(120, undefined, 40), 80, "no commit yet: measured from the assignment's origin");
    assert.equal(lagOf(120, 0, 40), 120, "a commit at 0 is a commit");
    assert.equal(lagOf(undefined, 100, 40), undefined, "log end not seen");
    assert.equal(lagOf(120, undefined, undefined), undefined, "nothing committed nor delivered");
    assert.equal(lagOf(90, 100, 40), 0, "never below 0 (a log end seen before the commit's batch)");
    assert.equal(lagOf(0, undefined, 0), 0, "an empty partition");
  });
});

describe("lag in metrics()", () => {
  test("no commit yet, then log end − confirmed; processingLag; the total over known partitions", async () => {
    const client = new MemoryClient();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const consumer = consumerOver(client, async (m) => {
      if (m.offset === 13) await gate;
    });
    await consumer.start();
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    assert.equal(part(consumer, 0)!.endOffset, undefined);
    assert.equal(part(consumer, 0)!.lag, undefined, "log end unknown");
    assert.equal(consumer.metrics().lag, 0);
    // Offsets 10..19 of a log that ends at 50; 13 held open.
    client.sink.deliver({ topic: "t", partition: 0, messages: range(10, 10).map((offset) => ({ offset, value: "" })), offsets: range(10, 10), next: 20, endOffset: 50 });
    let p0 = part(consumer, 0)!;
    assert.equal(p0.endOffset, 50);
    assert.equal(p0.confirmed, undefined);
    assert.equal(p0.lag, 40, "no commit yet: from where the assignment began reading (10)");
    await until(() => part(consumer, 0)!.confirmed === 13, 3_000, "10..12 committed");
    p0 = part(consumer, 0)!;
    assert.equal(p0.lag, 50 - 13);
    assert.equal(p0.processingLag, 20 - 13, "delivered − safe");
    assert.equal(part(consumer, 1)!.lag, undefined, "t/1: nothing seen");
    assert.equal(consumer.metrics().lag, 37, "only known lags count");
    // A fetch without records (or a later one) reports the log end outside a batch.
    client.sink.endOffsets!([{ topic: "t", partition: 1, endOffset: 7 }, { topic: "t", partition: 0, endOffset: 60 }]);
    assert.equal(part(consumer, 0)!.lag, 60 - 13);
    assert.equal(part(consumer, 1)!.endOffset, 7);
    assert.equal(part(consumer, 1)!.lag, undefined, "t/1: nothing committed nor delivered");
    release();
    await until(() => part(consumer, 0)!.confirmed === 20, 3_000, "all committed");
    assert.equal(part(consumer, 0)!.lag, 40);
    assert.equal(part(consumer, 0)!.processingLag, 0);
    assert.equal(consumer.metrics().lag, 40);
    await consumer.shutdown();
  });

  test("a bad end offset is refused naming it, and nothing is kept; an older answer does not move it back; unassigned ones are ignored", async () => {
    const client = new MemoryClient();
    const consumer = consumerOver(client);
    await consumer.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 30 }]);
    assert.throws(
      () => client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 40 }, { topic: "t", partition: 0, endOffset: -1 }]),
      (e: unknown) => e instanceof InvalidOffsetError && /-1/.test(e.message),
    );
    assert.equal(part(consumer, 0)!.endOffset, 30, "nothing kept from a refused list");
    assert.throws(
      () => client.sink.deliver({ topic: "t", partition: 0, messages: [{ offset: 0, value: "" }], offsets: [0], next: 1, endOffset: 1.5 }),
      InvalidOffsetError,
    );
    assert.equal(part(consumer, 0)!.delivered, undefined, "the batch was not taken");
    client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 25 }, { topic: "u", partition: 3, endOffset: 9 }]);
    assert.equal(part(consumer, 0)!.endOffset, 30);
    assert.equal(consumer.metrics().partitions.length, 1);
    await consumer.shutdown();
  });

  test("a revoked partition is dropped; assigned again, its log end starts unknown", async () => {
    const client = new MemoryClient();
    const consumer = consumerOver(client);
    await consumer.start();
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    client.deliver("t", 0, range(0, 5));
    client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 100 }, { topic: "t", partition: 1, endOffset: 10 }]);
    await until(() => part(consumer, 0)!.confirmed === 5, 3_000, "t/0 committed");
    assert.equal(consumer.metrics().lag, 95);
    await client.sink.revoking([{ topic: "t", partition: 0 }]);
    client.sink.assigned([{ topic: "t", partition: 1 }]);
    assert.deepEqual(consumer.metrics().partitions.map((p) => p.partition), [1]);
    assert.equal(consumer.metrics().lag, 0, "t/0's lag is gone; t/1 has none known");
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    assert.equal(part(consumer, 0)!.endOffset, undefined, "a new assignment starts unknown");
    await consumer.shutdown();
  });

  test("before anything is delivered or committed, the lag is measured from the committed offset read at assignment", async () => {
    const client = new MemoryClient();
    const consumer = consumerOver(client);
    await consumer.start();
    client.sink.assigned(
      [{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }],
      Promise.resolve([{ topic: "t", partition: 0, offset: 10, metadata: null }, { topic: "t", partition: 1, offset: undefined, metadata: null }]),
    );
    client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 10 }, { topic: "t", partition: 1, endOffset: 4 }]);
    await until(() => part(consumer, 0)!.lag !== undefined, 3_000, "the committed offsets read");
    assert.equal(part(consumer, 0)!.lag, 0, "caught up, nothing delivered: 0, not unknown");
    assert.equal(part(consumer, 1)!.lag, undefined, "t/1: the group has no committed offset and nothing was delivered");
    client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 15 }]);
    assert.equal(part(consumer, 0)!.lag, 5);
    await consumer.shutdown();
  });

  test("a paused partition's log end is asked of the client at the commit interval, so its lag grows", async () => {
    const client = new EndsClient();
    const consumer = consumerOver(client);
    await consumer.start();
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    client.sink.deliver({ topic: "t", partition: 0, messages: range(0, 5).map((offset) => ({ offset, value: "" })), offsets: range(0, 5), next: 5, endOffset: 5 });
    client.sink.deliver({ topic: "t", partition: 1, messages: [{ offset: 0, value: "" }], offsets: [0], next: 1, endOffset: 1 });
    await until(() => part(consumer, 0)!.confirmed === 5 && part(consumer, 1)!.confirmed === 1, 3_000, "committed");
    assert.equal(consumer.metrics().lag, 0);
    consumer.pause([{ topic: "t", partition: 0 }]);
    client.queried.length = 0;
    client.ends.set("t/0", 25); // records produced while paused: no fetch of t/0 reports them
    client.ends.set("t/1", 999); // t/1 is fetched: its log end comes from its fetches, not asked
    await until(() => part(consumer, 0)!.lag === 20, 3_000, "t/0's lag grew while paused");
    assert.ok(client.queried.every((q) => q.length === 1 && q[0] === "t/0"), `only t/0 asked: ${JSON.stringify(client.queried)}`);
    assert.equal(part(consumer, 1)!.endOffset, 1);
    consumer.resume();
    await consumer.shutdown();
    const after = client.queried.length;
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(client.queried.length, after, "no query after shutdown");
  });
});

describe("the bindings' end offsets (adapters/shared/end_offsets.ts)", () => {
  test("a client's high watermark is an offset or unknown", () => {
    assert.equal(endOffsetOf("123"), 123);
    assert.equal(endOffsetOf(7n), 7);
    assert.equal(endOffsetOf(0), 0);
    for (const unknown of ["-1001", "-1", "1e3", "", " 5", -1, 1.5, 2 ** 53, undefined, null]) {
      assert.equal(endOffsetOf(unknown), undefined, String(unknown));
    }
  });

  test("per topic: one query each, only the partitions asked for, a failed topic left out", async () => {
    const asked: string[] = [];
    const ends = await endOffsetsByTopic(
      [{ topic: "a", partition: 0 }, { topic: "b", partition: 1 }, { topic: "a", partition: 2 }, { topic: "c", partition: 0 }],
      (topic) => {
        asked.push(topic);
        if (topic === "c") return Promise.reject(new Error("not reachable"));
        return Promise.resolve([0, 1, 2].map((partition) => ({ partition, offset: String(10 * partition + topic.length), high: String(10 * partition + topic.length) })));
      },
    );
    assert.deepEqual(asked, ["a", "b", "c"]);
    assert.deepEqual(
      [...ends].sort((x, y) => x.topic.localeCompare(y.topic) || x.partition - y.partition),
      [{ topic: "a", partition: 0, endOffset: 1 }, { topic: "a", partition: 2, endOffset: 21 }, { topic: "b", partition: 1, endOffset: 11 }],
    );
  });
});
