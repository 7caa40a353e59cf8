// The Confluent binding's commit verification (adapters/confluent/commits.ts), driven by
// hand: a commit resolves only on librdkafka's outcome for exactly its offsets, without
// error; a refusal, a disconnect or no outcome in time fails it.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import process from "node:process";
import { describe, test } from "node:test";
import { CommitRefusedError, CommitVerifier, holdsCommit, type ReadBackPosition } from "../../adapters/confluent/commits.ts";

const offsets = [{ topic: "t", partition: 0, offset: 10 }, { topic: "t", partition: 1, offset: 7 }];
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
/** Waits until `ok()` holds (checked every 10 ms), at most 5 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
}

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

/** A verifier whose `overtaken` calls are recorded as `topic/partition` lists. */
function recordingOvertaken(): { source: EventEmitter; verifier: CommitVerifier; overtaken: string[][] } {
  const source = new EventEmitter();
  const overtaken: string[][] = [];
  const verifier = new CommitVerifier(source, 60_000, (ps) => overtaken.push(ps.map((p) => `${p.topic}/${p.partition}`)));
  return { source, verifier, overtaken };
}

/** Commits `offsets` and acknowledges them with their outcome at once. */
async function acknowledged(source: EventEmitter, verifier: CommitVerifier, offsets: Array<{ topic: string; partition: number; offset: number }>): Promise<void> {
  const w = watch(verifier.commit(offsets, () => Promise.resolve()));
  source.emit("offset.commit", undefined, offsets);
  await tick();
  assert.equal(w.state(), "resolved");
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

  test("a refusal or the timeout while the client's send is still pending fails the commit and leaves no unhandled rejection", async () => {
    // Seen in chaos (cooperative): librdkafka reported "Waiting for coordinator" (-180)
    // before commitOffsets resolved, and the member died of the unhandled rejection.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { source, verifier } = setup(20);
      const refused = watch(verifier.commit(offsets, async () => {
        source.emit("offset.commit", { code: -180, message: "Local: Waiting for coordinator" }, offsets);
        await new Promise((r) => setTimeout(r, 30));
      }));
      const timedOut = watch(verifier.commit([{ topic: "t", partition: 3, offset: 1 }], () => new Promise((r) => setTimeout(r, 60))));
      await new Promise((r) => setTimeout(r, 120));
      assert.equal(refused.state(), "rejected");
      assert.equal((refused.error() as CommitRefusedError).code, -180);
      assert.equal(timedOut.state(), "rejected");
      assert.match(String(timedOut.error()), /no outcome/);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
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

  test("a late outcome: the commit counts once the broker's committed positions read back hold exactly it", async () => {
    const { verifier } = setup(5_000);
    let answer: ReadBackPosition[] = [{ topic: "t", partition: 0, offset: "10", metadata: "" }, { topic: "t", partition: 1, offset: "6", metadata: null }];
    const asked: number[] = [];
    const w = watch(verifier.commit(offsets, () => Promise.resolve(), (ps) => {
      asked.push(ps.length);
      return Promise.resolve(answer);
    }));
    await until(() => asked.length >= 2);
    assert.equal(w.state(), "pending", "partition 1 reads back 6, not 7: not acknowledged");
    assert.ok(asked.length >= 1 && asked.every((n) => n === 2), `read back both partitions: ${JSON.stringify(asked)}`);
    answer = [{ topic: "t", partition: 0, offset: "10" }, { topic: "t", partition: 1, offset: "7" }];
    await until(() => w.state() !== "pending");
    assert.equal(w.state(), "resolved");
  });

  test("a read-back that fails or shows other metadata never acknowledges; the outcome still decides", async () => {
    const { source, verifier } = setup(5_000);
    const withMeta = [{ topic: "t", partition: 0, offset: 10, metadata: "set-A" }];
    let calls = 0;
    const w = watch(verifier.commit(withMeta, () => Promise.resolve(), () => {
      calls++;
      return calls % 2 === 1 ? Promise.reject(new Error("timed out")) : Promise.resolve([{ topic: "t", partition: 0, offset: 10, metadata: "set-B" }]);
    }));
    await until(() => calls >= 3);
    assert.ok(calls >= 3, `asked three times at least (${calls})`);
    assert.equal(w.state(), "pending");
    source.emit("offset.commit", { code: 12, message: "too large" }, withMeta);
    await tick();
    assert.equal(w.state(), "rejected");
    assert.equal((w.error() as CommitRefusedError).code, 12);
  });

  test("no outcome and a read-back that never answers: the commit fails early (the coordinator's connection is held)", async () => {
    // A classic cooperative rejoin: librdkafka's JoinGroup, answered only when the rebalance
    // completes, holds the commit and the read-back behind it on the coordinator's connection.
    const { verifier } = setup(60_000);
    let asked = 0;
    const w = watch(verifier.commit(offsets, () => Promise.resolve(), () => {
      asked++;
      return new Promise<ReadBackPosition[]>(() => {}); // never answers
    }));
    await until(() => w.state() !== "pending");
    assert.equal(w.state(), "rejected");
    assert.ok(w.error() instanceof CommitRefusedError);
    assert.match(String(w.error()), /connection is held/);
    assert.equal(asked, 1);
  });

  test("a read-back that answers keeps a late commit pending until its outcome", async () => {
    const { source, verifier } = setup(60_000);
    let asked = 0;
    const w = watch(verifier.commit(offsets, () => Promise.resolve(), () => {
      asked++;
      return Promise.resolve([{ topic: "t", partition: 0, offset: "9" }, { topic: "t", partition: 1, offset: "7" }]); // not stored yet
    }));
    await until(() => asked >= 3); // past the 400 ms at which an unanswered one fails
    assert.equal(w.state(), "pending");
    source.emit("offset.commit", undefined, offsets);
    await tick();
    assert.equal(w.state(), "resolved");
  });

  test("a commit settled without its outcome, reported after a newer commit of a partition was sent, names that partition as overtaken", async () => {
    // The chaos suite's round: a commit sent as the broker died was given up (no answer within
    // 400 ms), librdkafka kept resending it, and it landed after the commits made once the
    // broker was back. Its outcome is the sign that it reached the broker only now.
    const { source, verifier, overtaken } = recordingOvertaken();
    const silent = (): Promise<ReadBackPosition[]> => new Promise(() => {}); // the coordinator does not answer
    const a = [{ topic: "t", partition: 0, offset: 10 }, { topic: "t", partition: 1, offset: 7 }];
    const first = watch(verifier.commit(a, () => Promise.resolve(), silent));
    await until(() => first.state() !== "pending");
    assert.equal(first.state(), "rejected", "given up: the connection is held");
    await acknowledged(source, verifier, [{ topic: "t", partition: 0, offset: 12 }]);
    assert.deepEqual(overtaken, [], "nothing is overtaken while the old commit's fate is open");
    source.emit("offset.commit", undefined, a); // the resend of the first one landed now
    await tick();
    assert.deepEqual(overtaken, [["t/0"]], "partition 0 had a newer commit; partition 1 did not");
    source.emit("offset.commit", undefined, a); // reported once: a second event names nothing
    await tick();
    assert.equal(overtaken.length, 1);
    verifier.close();
  });

  test("a late outcome of a commit confirmed by read-back overtakes only when a newer commit was sent; an outcome that settles its commit overtakes nothing", async () => {
    const { source, verifier, overtaken } = recordingOvertaken();
    const a = [{ topic: "t", partition: 0, offset: 10 }];
    const first = watch(verifier.commit(a, () => Promise.resolve(), () => Promise.resolve([{ topic: "t", partition: 0, offset: "10" }])));
    await until(() => first.state() !== "pending");
    assert.equal(first.state(), "resolved", "confirmed by the read-back");
    source.emit("offset.commit", undefined, a); // its outcome, with no newer commit sent
    await tick();
    assert.deepEqual(overtaken, []);
    // Its outcome settled it for good: a new commit of the same offsets takes the next outcome.
    await acknowledged(source, verifier, a);
    assert.deepEqual(overtaken, [], "an outcome that settled its own commit is no late one");
    verifier.close();
  });

  test("outcomes of commits of the same offsets go oldest first: a late one does not settle a newer commit whose metadata may not have landed", async () => {
    // While the frontier is stuck, consecutive commits carry the same offsets and only their
    // metadata (the completed set) differs; an outcome names offsets only.
    const { source, verifier, overtaken } = recordingOvertaken();
    const silent = (): Promise<ReadBackPosition[]> => new Promise(() => {});
    const old = watch(verifier.commit([{ topic: "t", partition: 0, offset: 10, metadata: "a" }], () => Promise.resolve(), silent));
    await until(() => old.state() !== "pending");
    assert.equal(old.state(), "rejected", "given up: the connection is held");
    const newer = watch(verifier.commit([{ topic: "t", partition: 0, offset: 10, metadata: "ab" }], () => Promise.resolve()));
    source.emit("offset.commit", undefined, [{ topic: "t", partition: 0, offset: 10 }]); // the old one's, answered first
    await tick();
    assert.equal(newer.state(), "pending", "the older commit's outcome is not the newer one's");
    assert.deepEqual(overtaken, [["t/0"]], "the old commit landed after the newer one was sent");
    source.emit("offset.commit", { code: 12, message: "Broker: Offset metadata string too large" }, [{ topic: "t", partition: 0, offset: 10 }]);
    await tick();
    assert.equal(newer.state(), "rejected", "the newer commit's own outcome decides it");
    assert.equal((newer.error() as CommitRefusedError).code, 12);
    verifier.close();
  });

  test("holdsCommit compares every partition's offset and metadata (none = empty)", () => {
    assert.equal(holdsCommit(offsets, [{ topic: "t", partition: 0, offset: 10 }, { topic: "t", partition: 1, offset: "7", metadata: "" }]), true);
    assert.equal(holdsCommit(offsets, [{ topic: "t", partition: 0, offset: 10 }]), false, "a partition missing");
    assert.equal(holdsCommit([{ topic: "t", partition: 0, offset: 3, metadata: "m" }], [{ topic: "t", partition: 0, offset: 3, metadata: null }]), false);
    assert.equal(holdsCommit([], []), false, "an empty commit is never proven");
  });
});
