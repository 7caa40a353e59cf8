/**
 * The rebalance demo's sink and counts (demo/rebalance_db.ts, demo/rebalance_count.ts),
 * without Kafka: the version guard against a real SQLite database (WASM, in memory here;
 * the demo uses a file), and the definitions of stale overwrites, late writes, wrong final
 * rows and lost records on write logs built by hand.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SharedDb, type WriteAttempt, type WriteRow } from "../../demo/rebalance_db.ts";
import { countGap } from "../../demo/rebalance_count.ts";

const attempt = (over: Partial<WriteAttempt> & Pick<WriteAttempt, "offset" | "value">): WriteAttempt => ({
  key: "k",
  partition: 0,
  member: "a",
  owner: "a.1",
  ownerSince: 1_000,
  ...over,
});

test("guarded: a write applies only for an offset newer than the row's version; unguarded: last writer wins", async () => {
  for (const guarded of [true, false]) {
    const db = await SharedDb.open(":memory:");
    try {
      await db.init();
      const newOwner = { member: "b", owner: "b.1", ownerSince: 2_000 };
      assert.equal(await db.write(attempt({ offset: 7, value: "v7", ...newOwner }), guarded), true, "first write creates the row");
      assert.equal(await db.write(attempt({ offset: 8, value: "v8", ...newOwner }), guarded), true, "a newer record applies");
      // the old owner's late write of an older record, then of the same record again
      assert.equal(await db.write(attempt({ offset: 7, value: "v7" }), guarded), !guarded);
      assert.equal(await db.write(attempt({ offset: 8, value: "v8" }), guarded), !guarded);
      assert.equal((await db.rows()).get("k"), "v8", "the last write was of the last record either way");
      const writes = await db.writes();
      assert.deepEqual(writes.map((w) => [w.seq, w.offset, w.owner, w.applied]), [
        [1, 7, "b.1", true],
        [2, 8, "b.1", true],
        [3, 7, "a.1", !guarded],
        [4, 8, "a.1", !guarded],
      ]);
      const c = countGap(writes, await db.rows(), [{ key: "k", value: "v7" }, { key: "k", value: "v8" }]);
      assert.deepEqual(c, { staleOverwrites: guarded ? 0 : 2, lateWrites: 2, wrongFinalRows: 0, lost: 0, writes: 4 });
    } finally {
      db.close();
    }
  }
});

test("unguarded: the old owner's late write of an older record leaves the row wrong", async () => {
  const db = await SharedDb.open(":memory:");
  try {
    await db.init();
    await db.write(attempt({ offset: 7, value: "v7", member: "b", owner: "b.1", ownerSince: 2_000 }), false);
    await db.write(attempt({ offset: 8, value: "v8", member: "b", owner: "b.1", ownerSince: 2_000 }), false);
    await db.write(attempt({ offset: 7, value: "v7" }), false);
    const c = countGap(await db.writes(), await db.rows(), [{ key: "k", value: "v7" }, { key: "k", value: "v8" }]);
    assert.equal((await db.rows()).get("k"), "v7");
    assert.deepEqual(c, { staleOverwrites: 1, lateWrites: 1, wrongFinalRows: 1, lost: 0, writes: 3 });
  } finally {
    db.close();
  }
});

const row = (seq: number, over: Partial<WriteRow> & Pick<WriteRow, "offset">): WriteRow => ({
  seq,
  key: "k",
  partition: 0,
  value: `v${over.offset}`,
  member: "a",
  owner: "a.1",
  ownerSince: 1_000,
  applied: true,
  at: seq,
  ...over,
});

test("countGap: an old owner's write before the new owner's is not late; a refused one after it is late, not stale", () => {
  const b = { member: "b", owner: "b.1", ownerSince: 2_000 };
  const produced = [{ key: "k", value: "v1" }, { key: "k", value: "v2" }];
  // old owner first, then the new owner redoes it and goes on: the normal handover
  assert.deepEqual(
    countGap([row(1, { offset: 1 }), row(2, { offset: 1, ...b, applied: false }), row(3, { offset: 2, ...b })], new Map([["k", "v2"]]), produced),
    { staleOverwrites: 0, lateWrites: 0, wrongFinalRows: 0, lost: 0, writes: 3 },
  );
  // the old owner's write after the new owner's, refused by the guard
  assert.deepEqual(
    countGap([row(1, { offset: 1, ...b }), row(2, { offset: 2, ...b }), row(3, { offset: 1, applied: false })], new Map([["k", "v2"]]), produced),
    { staleOverwrites: 0, lateWrites: 1, wrongFinalRows: 0, lost: 0, writes: 3 },
  );
  // the same member in a later assignment is a newer owner
  const a2 = { member: "a", owner: "a.2", ownerSince: 3_000 };
  assert.equal(countGap([row(1, { offset: 1, ...a2 }), row(2, { offset: 1 })], new Map([["k", "v1"]]), produced.slice(0, 1)).staleOverwrites, 1);
  // a refused write of the new owner does not make it "landed": the old owner's next write is not late
  assert.equal(countGap([row(1, { offset: 1, ...b, applied: false }), row(2, { offset: 2 })], new Map(), produced).lateWrites, 0);
});

test("countGap: wrong final rows against the key's last produced value; lost = produced values no write carried", () => {
  const produced = [{ key: "x", value: "x0" }, { key: "y", value: "y0" }, { key: "x", value: "x1" }, { key: "z", value: "z0" }];
  const writes = [row(1, { key: "x", offset: 0, value: "x0" }), row(2, { key: "x", offset: 2, value: "x1" }), row(3, { key: "y", offset: 1, value: "y0" })];
  // x holds its last value, y is right, z never got a row and its record was never written
  assert.deepEqual(countGap(writes, new Map([["x", "x1"], ["y", "y0"]]), produced), {
    staleOverwrites: 0,
    lateWrites: 0,
    wrongFinalRows: 1,
    lost: 1,
    writes: 3,
  });
  assert.equal(countGap(writes, new Map([["x", "x0"], ["y", "y0"], ["z", "z0"]]), produced).wrongFinalRows, 1);
});
