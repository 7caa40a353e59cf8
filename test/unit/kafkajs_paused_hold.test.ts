// The KafkaJS binding's hold while every partition is paused (adapters/kafkajs/paused_hold.ts):
// all-paused exactly when every assigned partition is; a hold ends at a resume, not later,
// heartbeating while it lasts; a heartbeat's rejection (a rebalance) ends it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOLD_CHECK_MS, PausedHold } from "../../adapters/kafkajs/paused_hold.ts";

const tp = (topic: string, partition: number) => ({ topic, partition });

test("allPaused: every assigned partition paused (and at least one assigned); a consumer that is not running is not", () => {
  const h = new PausedHold();
  const paused = (list: Array<{ topic: string; partitions: number[] }>) => ({ paused: () => list });
  assert.equal(h.allPaused(paused([{ topic: "a", partitions: [0, 1] }]), [tp("a", 0), tp("a", 1)]), true);
  assert.equal(h.allPaused(paused([{ topic: "a", partitions: [0] }]), [tp("a", 0), tp("a", 1)]), false);
  assert.equal(h.allPaused(paused([{ topic: "a", partitions: [0, 1] }, { topic: "b", partitions: [0] }]), [tp("a", 1), tp("b", 0)]), true);
  assert.equal(h.allPaused(paused([{ topic: "b", partitions: [1] }]), [tp("b", 0)]), false, "another partition of the topic");
  assert.equal(h.allPaused(paused([]), []), false, "nothing assigned: nothing to hold for");
  assert.equal(h.allPaused({ paused: () => { throw new Error("not running"); } }, [tp("a", 0)]), false);
});

test("hold: ends right after a resume, heartbeating once per wake; a rejected heartbeat ends it with that error", async () => {
  const h = new PausedHold();
  let held = true, beats = 0;
  const t0 = Date.now();
  const holding = h.hold(() => held, () => (beats++, Promise.resolve()));
  setTimeout(() => ((held = false), h.resumed()), 20);
  await holding;
  assert.ok(Date.now() - t0 < HOLD_CHECK_MS, "woken by the resume, not the periodic check");
  assert.equal(beats, 1);
  // still held after the periodic check: it heartbeats each time
  let n = 0;
  await h.hold(() => n < 2, () => (n++, Promise.resolve()));
  assert.equal(n, 2);
  await assert.rejects(h.hold(() => true, () => Promise.reject(new Error("rebalancing"))), /rebalancing/);
});
