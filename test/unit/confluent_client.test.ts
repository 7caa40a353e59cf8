// The Confluent binding's client port (adapters/confluent/client.ts) over a fake
// `KafkaJS.Kafka`: where new partitions start, the committed floor of delivered batches,
// a partition whose committed read failed, and one whose read does not answer in time. The
// fake records what the binding asks of the client (pause, resume, seek, the assignment its
// rebalance callback hands back) and answers `committed()` as the test says.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import process from "node:process";
import { describe, test } from "node:test";
import { ConfluentClient, START_READ_MS } from "../../adapters/confluent/client.ts";
import type {
  ConfluentAssignmentFns,
  ConfluentCommitted,
  ConfluentEachBatchPayload,
  ConfluentMessage,
  ConfluentRebalanceError,
  ConfluentStartingPartition,
  ConfluentTopicPartition,
} from "../../adapters/confluent/types.ts";
import type { ClientSink, CommittedPosition, DeliveredBatch, TopicPartition } from "../../core/mod.ts";

const T = "orders";
const ASSIGN: ConfluentRebalanceError = { code: -175, message: "Local: Assign partitions" };
const FNS: ConfluentAssignmentFns = { assignmentLost: () => false };
type Rebalance = (err: ConfluentRebalanceError, assignment: ConfluentTopicPartition[], fns: ConfluentAssignmentFns) => Promise<ConfluentStartingPartition[] | undefined>;

/** Waits until `ok()` holds (checked every 5 ms), at most 10 s. */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting for ${what}`);
}

function message(offset: number): ConfluentMessage {
  return { key: null, value: null, timestamp: "0", attributes: 0, offset: String(offset) };
}

/** The internal client's answer for one partition: `offset` absent when the group has none. */
type Raw = { topic: string; partition: number; offset?: number; metadata?: string };

/** A fake client whose committed-offset read answers through `answer` (a rejection is a failed read). */
function fake(answer: (partitions: ConfluentTopicPartition[]) => Promise<Raw[]>) {
  const calls: string[] = [];
  const internal = Object.assign(new EventEmitter(), {
    getMetadata: (_o: unknown, cb: (err: unknown) => void) => cb(null),
    rebalanceProtocol: () => "COOPERATIVE",
    committed: (partitions: ConfluentTopicPartition[], _timeout: number, cb: (err: unknown, answer?: Raw[]) => void) =>
      void answer(partitions).then((a) => cb(null, a), (e) => cb(e)),
  });
  let rebalance: Rebalance | undefined;
  let eachBatch: ((p: ConfluentEachBatchPayload) => Promise<void>) | undefined;
  const list = (topics: Array<{ topic: string; partitions?: number[] }>) => topics.flatMap((t) => (t.partitions ?? []).map((p) => `${t.topic}/${p}`)).join(",");
  const consumer = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    subscribe: () => Promise.resolve(),
    run: (config: { eachBatch: (p: ConfluentEachBatchPayload) => Promise<void> }) => {
      eachBatch = config.eachBatch;
      return Promise.resolve();
    },
    pause: (topics: Array<{ topic: string; partitions?: number[] }>) => void calls.push(`pause ${list(topics)}`),
    resume: (topics: Array<{ topic: string; partitions?: number[] }>) => void calls.push(`resume ${list(topics)}`),
    seek: (p: ConfluentTopicPartition & { offset: string }) => void calls.push(`seek ${p.topic}/${p.partition}@${p.offset}`),
    commitOffsets: () => Promise.resolve(),
    committed: (): Promise<ConfluentCommitted[]> => Promise.reject(new Error("the binding reads through the internal client")),
    assignment: () => [],
    _getInternalClient: () => internal,
  };
  const kafka = {
    consumer: (config: Record<string, unknown>) => {
      rebalance = config.rebalance_cb as Rebalance;
      return consumer;
    },
  };
  return {
    kafka,
    calls,
    rebalance: (assignment: ConfluentTopicPartition[]) => rebalance!(ASSIGN, assignment, FNS),
    batch: (partition: number, offsets: number[]) => {
      const resolved: string[] = [];
      void eachBatch!({
        batch: { topic: T, partition, messages: offsets.map(message), lastOffset: () => String(offsets[offsets.length - 1]) },
        resolveOffset: (o) => void resolved.push(o),
      });
      return resolved;
    },
  };
}

/** A sink that takes every batch and records what reached it. */
function sink() {
  const delivered: Array<{ partition: number; offsets: number[]; next: number }> = [];
  const reads: Array<Promise<readonly CommittedPosition[]> | undefined> = [];
  const s: ClientSink<ConfluentMessage> = {
    assigned: (_p: readonly TopicPartition[], committed?: Promise<readonly CommittedPosition[]>) => {
      committed?.catch(() => {});
      reads.push(committed);
    },
    revoking: () => Promise.resolve(),
    lost: () => {},
    deliver: (b: DeliveredBatch<ConfluentMessage>) => {
      delivered.push({ partition: b.partition, offsets: Array.from(b.offsets), next: b.next });
      return true;
    },
    failed: () => {},
    unavailable: () => 0,
    available: () => {},
    signal: new AbortController().signal,
  };
  return { sink: s, delivered, reads };
}

const committedAt = (offsets: Record<number, number>) => (partitions: ConfluentTopicPartition[]): Promise<Raw[]> =>
  Promise.resolve(partitions.map((p) => (p.partition in offsets ? { topic: p.topic, partition: p.partition, offset: offsets[p.partition] } : { topic: p.topic, partition: p.partition })));

/**
 * A started client over the fake, owning `partitions`, whose commits are recorded (`sent`,
 * and with the disconnect in `order`), whose read-back answers `stored`, and whose
 * `outcome` emits librdkafka's commit outcome.
 */
async function committing(partitions: number[]) {
  const f = fake(committedAt({}));
  const state = {
    sent: [] as string[],
    order: [] as string[],
    stored: [] as Raw[],
    internal: undefined as EventEmitter | undefined,
    callback: undefined as Rebalance | undefined,
  };
  const kafka = {
    consumer: (config: Record<string, unknown>) => {
      const c = f.kafka.consumer(config);
      state.internal = c._getInternalClient();
      state.callback = config.rebalance_cb as Rebalance;
      return Object.assign(c, {
        commitOffsets: (list: Array<{ partition: number; offset: string }>) => {
          const sent = list.map((o) => `${o.partition}@${o.offset}`).join(",");
          state.sent.push(sent);
          state.order.push(`commit ${sent}`);
          return Promise.resolve();
        },
        committed: () => Promise.resolve(state.stored), // the read-back of a late outcome
        disconnect: () => (state.order.push("disconnect"), Promise.resolve()),
      });
    },
  };
  const client = new ConfluentClient(kafka as unknown as typeof f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
  await client.start(sink().sink);
  const rebalance: Rebalance = (err, assignment, fns) => state.callback!(err, assignment, fns);
  await rebalance(ASSIGN, partitions.map((partition) => ({ topic: T, partition })), FNS);
  const outcome = (list: Array<[number, number]>) => state.internal!.emit("offset.commit", undefined, list.map(([partition, offset]) => ({ topic: T, partition, offset })));
  return Object.assign(state, { client, rebalance, outcome });
}

describe("ConfluentClient (fake client)", () => {
  test("a late resend of an older commit that overtook newer ones: the binding commits the newest positions of the partitions it still owns again", async () => {
    const fx = await committing([0, 1]);
    const { sent, client, rebalance, outcome } = fx;

    // Commit A: librdkafka's outcome is late, the read-back shows the broker holds it.
    fx.stored = [{ topic: T, partition: 0, offset: 10 }, { topic: T, partition: 1, offset: 7 }];
    await client.commit([{ topic: T, partition: 0, offset: 10 }, { topic: T, partition: 1, offset: 7 }]);
    // Commit B of partition 0, acknowledged at once.
    const b = client.commit([{ topic: T, partition: 0, offset: 12 }]);
    await until(() => sent.length === 2, "commit B sent");
    outcome([[0, 12]]);
    await b;
    assert.deepEqual(sent, ["0@10,1@7", "0@12"]);
    // A's outcome now: librdkafka resent it and it landed after B.
    outcome([[0, 10], [1, 7]]);
    await until(() => sent.length === 3, "the repair");
    assert.equal(sent[2], "0@12", "partition 0 again at B's offset; partition 1 had no newer commit");
    outcome([[0, 12]]);

    // Two late outcomes at once (after an outage every held commit reports): one repair.
    fx.stored = [{ topic: T, partition: 0, offset: 13 }];
    await client.commit([{ topic: T, partition: 0, offset: 13 }]); // read back: outcome late
    fx.stored = [{ topic: T, partition: 1, offset: 8 }];
    await client.commit([{ topic: T, partition: 1, offset: 8 }]); // read back: outcome late
    const c = client.commit([{ topic: T, partition: 0, offset: 14 }, { topic: T, partition: 1, offset: 9 }]);
    await until(() => sent.length === 6, "commit C sent");
    outcome([[0, 14], [1, 9]]);
    await c;
    fx.stored = [{ topic: T, partition: 0, offset: 14 }, { topic: T, partition: 1, offset: 9 }]; // the repair reads back
    outcome([[0, 13]]);
    outcome([[1, 8]]);
    await until(() => sent.length === 7, "the repair");
    await new Promise((r) => setTimeout(r, 400)); // the repair confirmed by read-back; nothing else queued
    assert.deepEqual(sent.slice(6), ["0@14,1@9"], "one repair for both partitions");

    // A late outcome overtaking a partition that was revoked, then assigned again, repairs
    // nothing: the position sent in the earlier assignment is no longer this member's to send.
    fx.stored = [{ topic: T, partition: 0, offset: 15 }];
    await client.commit([{ topic: T, partition: 0, offset: 15 }]); // read back: outcome late
    const d = client.commit([{ topic: T, partition: 0, offset: 16 }]);
    await until(() => sent.length === 9, "commit D sent");
    outcome([[0, 16]]);
    await d;
    await rebalance!({ code: -174, message: "Local: Revoke partitions" }, [{ topic: T, partition: 0 }, { topic: T, partition: 1 }], FNS);
    await rebalance!(ASSIGN, [{ topic: T, partition: 0 }, { topic: T, partition: 1 }], FNS);
    outcome([[0, 15]]);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sent.length, 9, `nothing sent from an earlier assignment: ${JSON.stringify(sent)}`);
    await client.close();
  });

  test("close() waits for a late outcome that overtook a newer commit, and sends its repair before leaving the group", async () => {
    const c = await committing([0]);
    const { sent, order, client } = c;
    const outcome = (partition: number, offset: number) => c.outcome([[partition, offset]]);
    c.stored = [{ topic: T, partition: 0, offset: 10 }];
    await client.commit([{ topic: T, partition: 0, offset: 10 }]); // read back: its outcome is late
    const b = client.commit([{ topic: T, partition: 0, offset: 12 }]);
    await until(() => sent.length === 2, "commit B sent");
    outcome(0, 12);
    await b;
    const closing = client.close(); // the runner's last commit was acknowledged: it closes
    await new Promise((r) => setTimeout(r, 50));
    c.stored = [{ topic: T, partition: 0, offset: 12 }];
    outcome(0, 10); // the older commit's resend landed after B, as the consumer closes
    await closing;
    assert.deepEqual(order, ["commit 0@10", "commit 0@12", "commit 0@12", "disconnect"], "the repair goes out before the disconnect");
  });

  test("new partitions start at the committed offset read at assignment: the rebalance callback hands librdkafka their offsets", async () => {
    // Left to look the committed offsets up itself, librdkafka never starts a partition whose
    // lookup failed: it stays assigned and unfetched, and every seek of it fails.
    const f = fake(committedAt({ 0: 120, 1: 7, 3: 0 }));
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
    const s = sink();
    await client.start(s.sink);
    const handed = await f.rebalance([0, 1, 2, 3].map((partition) => ({ topic: T, partition })));
    assert.deepEqual(handed, [
      { topic: T, partition: 0, offset: 120 },
      { topic: T, partition: 1, offset: 7 },
      { topic: T, partition: 2, offset: -2 }, // none committed: the earliest (fromBeginning)
      { topic: T, partition: 3, offset: 0 }, // committed 0 is not "none"
    ]);
    await client.close();
  });

  test("no committed offset and the latest as reset policy: the partition starts at the end (-1)", async () => {
    const f = fake(committedAt({ 4: 0 }));
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: false });
    await client.start(sink().sink);
    assert.deepEqual(await f.rebalance([{ topic: T, partition: 3 }, { topic: T, partition: 4 }]), [
      { topic: T, partition: 3, offset: -1 },
      { topic: T, partition: 4, offset: 0 },
    ]);
    await client.close();
  });

  test("a committed read that fails leaves the lookup to librdkafka (no guessed start)", async () => {
    const f = fake(() => Promise.reject(new Error("coordinator not available")));
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
    await client.start(sink().sink);
    assert.equal(await f.rebalance([{ topic: T, partition: 0 }]), undefined);
    await client.close();
  });

  test("a committed read that does not answer within START_READ_MS (twice the runner's bound) leaves the lookup to librdkafka", async () => {
    // The callback does not wait for ever, and not less than the runner's bound on the same read.
    const f = fake(() => new Promise<Raw[]>(() => {}));
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
    await client.start(sink().sink);
    const t0 = Date.now();
    assert.equal(await f.rebalance([{ topic: T, partition: 0 }]), undefined);
    const ms = Date.now() - t0;
    assert.ok(ms >= START_READ_MS - 50 && ms < START_READ_MS + 1_000, `the callback returned after ${ms} ms`);
    await client.close();
  });

  test("records below the committed offset read at assignment are dropped at the binding", async () => {
    const f = fake(committedAt({ 0: 105 }));
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
    const s = sink();
    await client.start(s.sink);
    await f.rebalance([{ topic: T, partition: 0 }]);
    // The client starts the partition at a stale position (e.g. a seek queued in an earlier assignment).
    const wholly = f.batch(0, [100, 101, 102]);
    assert.deepEqual(s.delivered, [], "a batch wholly below the committed offset never reaches the runner");
    assert.deepEqual(wholly, ["102"], "it is resolved: the client moves on");
    const part = f.batch(0, [103, 104, 105, 106]);
    assert.deepEqual(s.delivered, [{ partition: 0, offsets: [105, 106], next: 107 }], "only the records at or above it are delivered");
    assert.deepEqual(part, ["106"]);
    await client.close();
  });

  test("a partition whose committed read failed stays paused until a read succeeds; it never seeks to the earliest", async () => {
    let fail = true;
    let reads = 0;
    const f = fake((partitions) => {
      reads++;
      return fail ? Promise.reject(new Error("coordinator not available")) : committedAt({ 0: 40 })(partitions);
    });
    const client = new ConfluentClient(f.kafka, { "group.id": "g" }, [T], { fromBeginning: true });
    const s = sink();
    await client.start(s.sink);
    await f.rebalance([{ topic: T, partition: 0 }]);
    await assert.rejects(s.reads[0]!, /coordinator not available/);
    client.pause([{ topic: T, partition: 0 }]); // the runner holds it, then releases it after the failed read
    f.calls.length = 0;
    client.resume([{ topic: T, partition: 0 }]);
    const before = reads;
    await until(() => reads >= before + 2, "reads again");
    assert.deepEqual(f.calls, [], "not resumed, not sought while its start is unknown");
    fail = false;
    await until(() => f.calls.length >= 2, "the resume once a read succeeded");
    assert.deepEqual(f.calls, [`resume ${T}/0`, `seek ${T}/0@40`], "resumed at its committed offset");
    await client.close();
  });

  // Node only: adapters/confluent/mod.ts refuses to load on Bun and Deno (and they never warn).
  if (!process.versions.bun && !(globalThis as { Deno?: unknown }).Deno) {
    test("createConfluentConsumer lifts the listener limit of record signals: 30 records of a partition in flight, each listening, no warning", async () => {
      const { createConfluentConsumer } = await import("../../adapters/confluent/mod.ts");
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.name);
      process.on("warning", onWarning);
      const f = fake(committedAt({}));
      // librdkafka reports every commit's outcome (offset.commit on the internal client): the
      // shutdown's final commit is acknowledged at once instead of waiting out the binding's
      // 60 s outcome timeout (three minutes with the runner's retries).
      const kafka = {
        consumer: (config: Record<string, unknown>) => {
          const consumer = f.kafka.consumer(config);
          const internal = consumer._getInternalClient();
          return Object.assign(consumer, {
            commitOffsets: (list: Array<{ topic: string; partition: number; offset: string }>) => {
              setTimeout(() => internal.emit("offset.commit", undefined, list.map((o) => ({ topic: o.topic, partition: o.partition, offset: Number(o.offset) }))), 1);
              return Promise.resolve();
            },
          });
        },
      };
      let running = 0;
      const release: Array<() => void> = [];
      const c = createConfluentConsumer({
        kafka: kafka as unknown as typeof f.kafka,
        config: { "group.id": "g" },
        topics: [T],
        engine: "js",
        concurrency: 30,
        handler: (_m, { signal }) =>
          new Promise<void>((resolve) => {
            const done = (): void => (signal.removeEventListener("abort", done), resolve());
            signal.addEventListener("abort", done);
            running++;
            release.push(done);
          }),
      });
      try {
        await c.start();
        await f.rebalance([{ topic: T, partition: 0 }]);
        f.batch(0, Array.from({ length: 30 }, (_, i) => i));
        await until(() => running === 30, "30 records running");
        await new Promise((r) => setTimeout(r, 20)); // Node emits the warning on the next tick
        for (const r of release) r();
        await until(() => c.metrics().partitions[0]?.safe === 30, "all done");
      } finally {
        process.off("warning", onWarning);
        await c.shutdown();
      }
      assert.deepEqual(warnings.filter((w) => w === "MaxListenersExceededWarning"), []);
    });
  }
});
