/**
 * The rebalance simulation's database table: one row per key holding the value of the
 * record that last wrote it and that record's offset as its version. With the guard on,
 * a write applies only when its record is newer than the row (docs/rebalance-gap.md,
 * "The guard": `UPDATE … WHERE version < :offset`); every write is counted by who made it.
 *
 * @module
 */

/** A row of the table. */
interface Row {
  value: string;
  version: number;
  writer: string;
}

/** An in-page table of rows by key, with the counts the rebalance demo reports. */
export class SinkTable {
  /** Whether stale writes are refused. */
  readonly guarded: boolean;
  /** Rows by key. */
  readonly rows: Map<string, Row> = new Map();
  /** Writes by a key's previous owner that changed a row after the new owner had written it. */
  staleOverwrites = 0;
  /** Writes the guard refused. */
  refused = 0;
  /** Offsets some write carried (applied or refused). */
  readonly written: Set<number> = new Set();

  /** @param guarded whether writes carry the version guard */
  constructor(guarded: boolean) {
    this.guarded = guarded;
  }

  /**
   * Writes `value` for `key` as the record at `offset`, by `writer`; `newOwner`: the partition's owner now, if it moved.
   * @returns whether the row changed
   */
  write(key: string, value: string, offset: number, writer: string, newOwner: string | undefined): boolean {
    this.written.add(offset);
    const row = this.rows.get(key);
    if (this.guarded && row !== undefined && row.version >= offset) {
      this.refused++;
      return false;
    }
    if (row !== undefined && newOwner !== undefined && writer !== newOwner && row.writer === newOwner) this.staleOverwrites++;
    this.rows.set(key, { value, version: offset, writer });
    return true;
  }

  /** Rows that do not hold their key's last record (`last`: key → value of its last record). */
  wrongRows(last: ReadonlyMap<string, string>): number {
    let wrong = 0;
    for (const [key, value] of last) if (this.rows.get(key)?.value !== value) wrong++;
    return wrong;
  }
}
