// KafkaJS's fetcher woken by a resume (adapters/kafkajs/paused_wake.ts), on KafkaJS's own
// ConsumerGroup prototype: with nothing of its node active, a fetch waits for a resume of
// its group (and returns no batches) instead of sleeping out maxWaitTime; at most that long.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { installPausedWake, nothingToFetch } from "../../adapters/kafkajs/paused_wake.ts";

type TPs = Array<{ topic: string; partitions: number[] }>;
const group = (active: TPs, byNode: (tps: TPs) => TPs = (tps) => tps) => ({
  maxWaitTime: 60_000,
  logger: { info: () => {} },
  subscriptionState: { active: () => active, resume: () => {} },
  filterPartitionsByNode: (_node: unknown, tps: TPs) => byNode(tps),
});

test("nothingToFetch: none of the node's assigned partitions active; KafkaJS unable to tell is not nothing", () => {
  assert.equal(nothingToFetch(group([{ topic: "a", partitions: [] }]), 1), true);
  assert.equal(nothingToFetch(group([]), 1), true);
  assert.equal(nothingToFetch(group([{ topic: "a", partitions: [0] }]), 1), false);
  assert.equal(nothingToFetch(group([{ topic: "a", partitions: [0] }], (tps) => tps.map((t) => ({ ...t, partitions: [] }))), 1), true, "led by another node");
  assert.equal(nothingToFetch(group([{ topic: "a", partitions: [0] }], () => { throw new Error("no metadata"); }), 1), false);
});

test("installed on KafkaJS's ConsumerGroup: a fetch with nothing to fetch returns [] at its group's resume, or after maxWaitTime", async () => {
  assert.equal(installPausedWake(), "yes");
  assert.equal(installPausedWake(), "yes", "once");
  const ConsumerGroup = createRequire(import.meta.url)("kafkajs/src/consumer/consumerGroup.js") as { prototype: object };
  const make = (maxWaitTime: number) => Object.assign(Object.create(ConsumerGroup.prototype), group([{ topic: "a", partitions: [] }]), { maxWaitTime }) as {
    fetch(node: number): Promise<unknown[]>;
    resume(tps: unknown): void;
  };
  const g = make(60_000), other = make(60_000);
  let done = false;
  const t0 = Date.now();
  const fetching = g.fetch(1).then((b) => ((done = true), b));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(done, false, "waits while nothing can be fetched");
  other.resume([{ topic: "a", partitions: [0] }]);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(done, false, "another group's resume does not wake it");
  g.resume([{ topic: "a", partitions: [0] }]);
  assert.deepEqual(await fetching, []);
  assert.ok(Date.now() - t0 < 5_000);
  const t1 = Date.now();
  assert.deepEqual(await make(30).fetch(1), [], "at most maxWaitTime");
  assert.ok(Date.now() - t1 >= 25);
});
