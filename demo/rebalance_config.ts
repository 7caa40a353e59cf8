/**
 * What the rebalance demo's harness (demo/rebalance.ts) and its members
 * (demo/rebalance_member.ts) agree on: the member's settings and the trap records' mark.
 *
 * @module
 */

/** What the harness passes to a member (argv[2], JSON). */
export interface MemberConfig {
  /** `a`, `b`, `c`. */
  member: string;
  brokers: string;
  topic: string;
  group: string;
  /** The shared SQLite file. */
  db: string;
  /** Refuse writes of records older than the row's version. */
  guarded: boolean;
  /** Trap records are slow (until the harness writes `fast` on stdin). */
  slowTraps: boolean;
  /** The revoke's drain bound (`drainTimeoutMs`). */
  drainMs: number;
  /** Work per ordinary record. */
  workMs: number;
  /** A trap's write lands this long after its partition was taken away. */
  lateMs: number;
  /** Handler calls at once. */
  concurrency: number;
}

/** The suffix of a trap record's value. */
export const TRAP = "~slow";

