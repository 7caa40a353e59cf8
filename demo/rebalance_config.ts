/**
 * What the rebalance demo's harness (demo/rebalance.ts) and its members
 * (demo/rebalance_member.ts) agree on: the member's settings, the trap records' mark,
 * and the scenario's options in `npm run demo -- --help` (demo/run.ts).
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

/** The rebalance scenario's part of `npm run demo -- --help`. */
export const REBALANCE_OPTIONS = `  --runs K             runs (default 1), each with the guard off, then on
  --runtime RT         runtime of the member processes: node, bun or deno (default node)
  --partitions N       partitions of the topic (default 6)
  --keys N             keys, one row each (default 300)
  --drain-ms MS        the members' revoke drain bound (default 1000)
  --late-ms MS         a trap's write lands this long after its partition moved (default 3000)
  --work-ms MS         work per ordinary record (default 2)
  --only MODE          unguarded or guarded (default both)
  --json               print only the figures, as JSON, on stdout
  --keep-logs          keep the per-run databases`;
