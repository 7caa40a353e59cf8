// The Confluent binding's commit verification (adapters/confluent_commits.ts), driven by
// hand: a commit resolves only on librdkafka's outcome for exactly its offsets, without
// error; a refusal, a disconnect or no outcome in time fails it.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { CommitRefusedError, CommitVerifier } from "../../adapters/confluent_commits.ts";

const offsets = [{ topic: "t", partition: 0, offset: 10 }, { topic: "t", partition: 1, offset: 7 }];
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

function setup(timeoutMs = 5_000): { source: EventEmitter; verifier: CommitVerifier; sent: number[] } {
  const source = new EventEmitter();
  return { source, verifier: new CommitVerifier(source, timeoutMs), sent: [] };
}

/** Tracks whether a promise settled, and how. */
function watch(p: Promise<void>): { state: () => string; error: () => unknown } {
  let state = "pending", error: unknown;
  p.then(() => (state = "resolved"), (e) => ((state = "rejected"), (error = e)));
  return { state: () => state, error: () => error };
}

describe("CommitVerifier", () => {
  test("a queued commit is not acknowledged until its outcome arrives without error", async () => {
    const { source, verifier } = setup();
    const w = watch(verifier.commit(offsets, () => Promise.resolve()));
    await tick();
    assert.equal(w.state(), "pending", "queued is not acknowledged");
    source.emit("offset.commit", undefined, [{ topic: "t", partition: 0, offset: 11 }]); // another commit's outcome
    await tick();
    assert.equal(w.state(), "pending", "an outcome for other offsets settles nothing");
    source.emit("offset.commit", undefined, [{ topic: "t", partition: 1, offset: 7 }, { topic: "t", partition: 0, offset: 10 }]);
    await tick();
    assert.equal(w.state(), "resolved");
  });

  test("a refused commit fails with the broker's code", async () => {
    const { source, verifier } = setup();
    const w = watch(verifier.commit(offsets, () => Promise.resolve()));
    source.emit("offset.commit", { code: 12, message: "Broker: Offset metadata string too large" }, offsets);
    await tick();
    assert.equal(w.state(), "rejected");
    assert.ok(w.error() instanceof CommitRefusedError);
    assert.equal((w.error() as CommitRefusedError).code, 12);
    assert.match(String(w.error()), /t\/0@10/);
  });

  test("an outcome that arrives before the client's promise resolved still counts", async () => {
    const { source, verifier } = setup();
    const w = watch(verifier.commit(offsets, () => {
      source.emit("offset.commit", undefined, offsets);
      return tick();
    }));
    await tick();
    await tick();
    assert.equal(w.state(), "resolved");
  });

  test("a failed send, a disconnect and a missing outcome each fail the commit", async () => {
    const { verifier } = setup(30);
    const sendFails = watch(verifier.commit(offsets, () => Promise.reject(new Error("not connected"))));
    const noOutcome = watch(verifier.commit([{ topic: "t", partition: 2, offset: 1 }], () => Promise.resolve()));
    await tick();
    assert.equal(sendFails.state(), "rejected");
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(noOutcome.state(), "rejected");
    assert.match(String(noOutcome.error()), /no outcome/);
    const closed = watch(verifier.commit(offsets, () => Promise.resolve()));
    await tick();
    verifier.close();
    await tick();
    assert.equal(closed.state(), "rejected");
    assert.match(String(closed.error()), /disconnected/);
  });
});
