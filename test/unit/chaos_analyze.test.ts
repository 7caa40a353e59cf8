/**
 * The chaos suite's counting (test/chaos/analyze.ts) on hand-written logs: lost,
 * duplicates and their causes, key-order violations per assignment, mismatches.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { countLogs, type MemberInfo, type ProducedRecord } from "../chaos/analyze.ts";

const T = "t";
/** Records 0..n-1 on partition 0, key `k`, seq = offset; the poison at `poisonAt`. */
function produced(n: number, poisonAt = -1): ProducedRecord[] {
  return Array.from({ length: n }, (_, o) =>
    o === poisonAt
      ? { partition: 0, offset: o, key: "poison", seq: -1, poison: true }
      : { partition: 0, offset: o, key: "k", seq: o, poison: false });
}
const F = (at: number, m: string, pid: number, offset: number, seq: number, a: string, key = "k"): string =>
  ["F", at, m, pid, `${T}-0`, offset, key, seq, a].join("\t");
const ev = (kind: string, at: number, m: string, pid: number, a: string, ...rest: string[]): string =>
  [kind, at, m, pid, a, ...rest].join("\t");

describe("chaos log counting", () => {
  test("lost: a produced record no log finished; the poison is never lost", () => {
    const logs = [[ev("J", 1, "m1", 11, "m1.1", "t-0"), F(2, "m1", 11, 0, 0, "m1.1"), F(3, "m1", 11, 2, 2, "m1.1")].join("\n")];
    const c = countLogs(T, produced(4, 3), logs, [{ member: "m1", pid: 11, fate: "final-stop" }], []);
    assert.equal(c.expected, 3);
    assert.equal(c.lost, 1); // offset 1
    assert.equal(c.finished, 2);
    assert.equal(c.duplicates, 0);
  });

  test("duplicates are charged to what ended the earlier finisher's assignment", () => {
    const members: MemberInfo[] = [
      { member: "m1", pid: 11, fate: "sigkill" },
      { member: "m2", pid: 12, fate: "final-stop" },
      { member: "m3", pid: 13, fate: "final-stop" },
    ];
    const m1 = [ev("J", 1, "m1", 11, "m1.1", "t-0"), F(2, "m1", 11, 0, 0, "m1.1")].join("\n");
    // m2: finishes 1 and 2 in m2.1, revoked (R) at 10, rejoins as m2.2; redoes 2 there (same process, other assignment)
    const m2 = [
      ev("J", 3, "m2", 12, "m2.1", "t-0"),
      F(4, "m2", 12, 0, 0, "m2.1"), // redo of m1's (m1 SIGKILLed): sigkill
      F(5, "m2", 12, 1, 1, "m2.1"),
      ev("R", 10, "m2", 12, "m2.1"),
      ev("J", 11, "m2", 12, "m2.2", "t-0"),
      F(12, "m2", 12, 1, 1, "m2.2"), // redo after m2.1's revoke: rebalance
    ].join("\n");
    // m3 finishes 2, crashes (X) during the broker outage, rejoins and redoes 2 (twice)
    const m3 = [
      ev("J", 20, "m3", 13, "m3.1", "t-0"),
      F(21, "m3", 13, 2, 2, "m3.1"),
      ev("X", 25, "m3", 13, "m3.1", "true", "Closed connection"),
      ev("J", 40, "m3", 13, "m3.2", "t-0"),
      F(41, "m3", 13, 2, 2, "m3.2"), // redo after a crash in the outage: broker-restart
      F(42, "m3", 13, 2, 2, "m3.2"), // twice in one assignment: same-assignment
    ].join("\n");
    const c = countLogs(T, produced(3), [m1, m2, m3], members, [{ downAt: 24, upAt: 30 }]);
    assert.equal(c.lost, 0);
    assert.equal(c.duplicates, 4);
    assert.equal(c.duplicatesBy.sigkill, 1);
    assert.equal(c.duplicatesBy.rebalance, 1);
    assert.equal(c.duplicatesBy["broker-restart"], 1);
    assert.equal(c.duplicatesBy["same-assignment"], 1);
    assert.equal(c.finishes, 7);
  });

  test("a SIGTERM that came while the broker was down is charged to sigterm-outage, one outside it to sigterm", () => {
    const members: MemberInfo[] = [
      { member: "m1", pid: 11, fate: "sigterm" },
      { member: "m2", pid: 12, fate: "sigterm" },
      { member: "m3", pid: 13, fate: "final-stop" },
    ];
    // m1 finishes 0, is SIGTERMed (T) at 25 while the broker is down (24–30); m2 finishes 1, SIGTERMed at 50
    const m1 = [ev("J", 1, "m1", 11, "m1.1", "t-0"), F(2, "m1", 11, 0, 0, "m1.1"), ev("T", 25, "m1", 11, "m1.1")].join("\n");
    const m2 = [ev("J", 3, "m2", 12, "m2.1", "t-0"), F(4, "m2", 12, 1, 1, "m2.1"), ev("T", 50, "m2", 12, "m2.1")].join("\n");
    const m3 = [ev("J", 60, "m3", 13, "m3.1", "t-0"), F(61, "m3", 13, 0, 0, "m3.1"), F(62, "m3", 13, 1, 1, "m3.1")].join("\n");
    const c = countLogs(T, produced(2), [m1, m2, m3], members, [{ downAt: 24, upAt: 30 }]);
    assert.equal(c.duplicates, 2);
    assert.equal(c.duplicatesBy["sigterm-outage"], 1);
    assert.equal(c.duplicatesBy.sigterm, 1);
  });

  test("redoneAfterCommit: a duplicate whose earlier finish an acknowledged commit of its assignment covered", () => {
    const m1 = [
      ev("J", 1, "m1", 11, "m1.1", "t-0"),
      F(2, "m1", 11, 0, 0, "m1.1"),
      F(3, "m1", 11, 1, 1, "m1.1"),
      ev("K", 4, "m1", 11, "m1.1", "0:1"), // commits offset 1: record 0 done, record 1 not covered
    ].join("\n");
    const m2 = [ev("J", 5, "m2", 12, "m2.1", "t-0"), F(6, "m2", 12, 0, 0, "m2.1"), F(7, "m2", 12, 1, 1, "m2.1")].join("\n");
    const members: MemberInfo[] = [{ member: "m1", pid: 11, fate: "sigkill" }, { member: "m2", pid: 12, fate: "final-stop" }];
    const c = countLogs(T, produced(2), [m1, m2], members, []);
    assert.equal(c.duplicates, 2);
    assert.equal(c.redoneAfterCommit, 1);
  });

  test("key order is checked within an assignment only: a redo after a handover is no violation", () => {
    const log = [
      ev("J", 1, "m1", 11, "m1.1", "t-0"),
      F(2, "m1", 11, 0, 0, "m1.1"),
      F(3, "m1", 11, 2, 2, "m1.1"),
      F(4, "m1", 11, 1, 1, "m1.1"), // seq 1 after seq 2, same assignment: a violation
      ev("J", 5, "m1", 11, "m1.2", "t-0"),
      F(6, "m1", 11, 1, 1, "m1.2"), // new assignment: starts over, fine
      F(7, "m1", 11, 3, 0, "m1.2", "other"), // another key: its own order
    ].join("\n");
    const recs = produced(3).concat([{ partition: 0, offset: 3, key: "other", seq: 0, poison: false }]);
    const c = countLogs(T, recs, [log], [{ member: "m1", pid: 11, fate: "final-stop" }], []);
    assert.equal(c.orderViolations, 1);
    assert.equal(c.duplicates, 1);
  });

  test("mismatches: a line naming another topic, an unknown offset or the wrong seq; the poison finished", () => {
    const log = [
      F(1, "m1", 11, 0, 7, "m1.1"), // wrong seq
      F(2, "m1", 11, 9, 9, "m1.1"), // not produced
      ["F", 3, "m1", 11, "other-0", 0, "k", 0, "m1.1"].join("\t"), // other topic
      F(4, "m1", 11, 1, -1, "m1.1", "poison"),
      "F\t5\tm1\t11\tt-0", // torn last line: ignored
    ].join("\n");
    const c = countLogs(T, produced(2, 1), [log], [{ member: "m1", pid: 11, fate: "final-stop" }], []);
    assert.equal(c.mismatches, 3);
    assert.equal(c.poisonFinished, true);
    assert.equal(c.lost, 1);
  });
});
