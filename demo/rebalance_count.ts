/**
 * The rebalance demo's counts, from the shared database's write log alone (pure: no I/O).
 *
 * Owners: a partition's records are written by a sequence of owners, one per assignment
 * (`<member>.<n>`, begun at `ownerSince`). All writes of a key come from its partition,
 * so a key's owners are ordered by `ownerSince`: the later one is the newer owner.
 *
 * - **late write**: a write attempt (applied or refused) by an owner after a write of the
 *   same key by a *newer* owner had landed (an applied write with a lower `seq`): the old
 *   owner's handler outlived its assignment;
 * - **stale overwrite**: a late write that changed the row, i.e. a previous owner's write
 *   landing after the new owner's write of the same key;
 * - **wrong final row**: a key whose row does not hold the value of the key's last
 *   produced record (or has no row);
 * - **lost record**: a produced record that no write attempt carried.
 *
 * @module
 */
import type { WriteRow } from "./rebalance_db.ts";

/** The counts of one run of one mode. */
export interface GapCounts {
  staleOverwrites: number;
  lateWrites: number;
  wrongFinalRows: number;
  lost: number;
  /** Write attempts in the log. */
  writes: number;
}

/** A produced record: its key and value (values are unique). */
export interface Produced {
  key: string;
  value: string;
}

/**
 * Counts one run.
 * @param writes the write log in commit order
 * @param rows the final row values by key
 * @param produced every produced record, in production order per key (the last of a key is its final value)
 */
export function countGap(writes: readonly WriteRow[], rows: ReadonlyMap<string, string>, produced: readonly Produced[]): GapCounts {
  // Per key: the newest owner whose write has landed so far.
  const newest = new Map<string, { owner: string; since: number }>();
  let staleOverwrites = 0, lateWrites = 0;
  for (const w of [...writes].sort((a, b) => a.seq - b.seq)) {
    const n = newest.get(w.key);
    const late = n !== undefined && n.owner !== w.owner && w.ownerSince < n.since;
    if (late) {
      lateWrites++;
      if (w.applied) staleOverwrites++;
    } else if (w.applied && (n === undefined || w.ownerSince > n.since)) {
      newest.set(w.key, { owner: w.owner, since: w.ownerSince });
    }
  }
  const last = new Map<string, string>();
  for (const p of produced) last.set(p.key, p.value);
  let wrongFinalRows = 0;
  for (const [key, value] of last) if (rows.get(key) !== value) wrongFinalRows++;
  const written = new Set(writes.map((w) => w.value));
  const lost = produced.filter((p) => !written.has(p.value)).length;
  return { staleOverwrites, lateWrites, wrongFinalRows, lost, writes: writes.length };
}
