/**
 * The shared database of the rebalance demo: one SQLite file (SQLite compiled to WASM,
 * npm `node-sqlite3-wasm`, on Node, Bun and Deno alike) that every member process and the
 * harness open at once. Its VFS takes an exclusive lock on the file (a `<file>.lock`
 * directory) for every read or write transaction, so the processes' transactions are
 * serialised; a `database is locked` answer is retried here after a short async sleep,
 * so a waiting member keeps heartbeating.
 *
 * Tables:
 * - `rows(key, value, version)`: the sink, one row per key; `version` is the offset of
 *   the record that last wrote it;
 * - `writes(seq, …)`: every write attempt of a handler, in the same transaction as the
 *   row change, in commit order (`seq`): key, partition, offset, value, the member and the
 *   assignment (owner) it ran in, when that assignment began, whether the row changed,
 *   and when (`at`, ms since the epoch).
 *
 * @module
 */
import sqlite3 from "node-sqlite3-wasm";

/** A connection of node-sqlite3-wasm. */
type Db = InstanceType<typeof sqlite3.Database>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** True for SQLite's "another connection holds the lock" answers. */
function isBusy(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return m.includes("database is locked") || m.includes("database is busy");
}

/** How long a transaction waits for the file lock before it fails. */
export const BUSY_LIMIT_MS = 30_000;

/** One write attempt, as a handler makes it. */
export interface WriteAttempt {
  key: string;
  partition: number;
  offset: number;
  value: string;
  /** Member name (`a`, `b`, `c`). */
  member: string;
  /** The assignment the handler ran in: `<member>.<n>`, n counting the member's group joins. */
  owner: string;
  /** Date.now() when that assignment began (its GROUP_JOIN); one clock: all processes run on one machine. */
  ownerSince: number;
}

/** A line of the `writes` table. */
export interface WriteRow extends WriteAttempt {
  /** Commit order. */
  seq: number;
  /** The row changed (always, unguarded; only for a newer offset, guarded). */
  applied: boolean;
  /** Date.now() at the write (inside its transaction). */
  at: number;
}

/** The unguarded write: last writer wins, whatever its offset. */
export const UNGUARDED_UPSERT = "INSERT INTO rows (key, value, version) VALUES (?, ?, ?) " +
  "ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version";

/** The guarded write: the row changes only for a record newer than the one that wrote it last. */
export const GUARDED_UPSERT = UNGUARDED_UPSERT + " WHERE rows.version < excluded.version";

/** The shared database, opened by one process. */
export class SharedDb {
  readonly #db: Db;

  private constructor(db: Db) {
    this.#db = db;
  }

  /** Opens (and creates) the file at `path`. */
  static async open(path: string): Promise<SharedDb> {
    const db = new SharedDb(new sqlite3.Database(path));
    // No fsync per commit: the demo must survive processes ending, not the machine
    // losing power; the file lock still serialises every transaction.
    await db.#retry(() => db.#db.exec("PRAGMA synchronous = OFF"));
    return db;
  }

  /** Runs `fn` until no other process holds the lock (at most {@link BUSY_LIMIT_MS}). */
  async #retry<T>(fn: () => T): Promise<T> {
    const deadline = Date.now() + BUSY_LIMIT_MS;
    for (let wait = 1;; wait = Math.min(wait * 2, 20)) {
      try {
        return fn();
      } catch (e) {
        if (!isBusy(e) || Date.now() > deadline) throw e;
        await sleep(wait);
      }
    }
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction, retried while another process holds
   * the lock (at most {@link BUSY_LIMIT_MS}: a lock left by a killed process never frees).
   */
  async transaction<T>(fn: (db: Db) => T): Promise<T> {
    const deadline = Date.now() + BUSY_LIMIT_MS;
    for (let wait = 1;; wait = Math.min(wait * 2, 20)) {
      try {
        this.#db.exec("BEGIN IMMEDIATE");
      } catch (e) {
        if (!isBusy(e) || Date.now() > deadline) throw e;
        await sleep(wait);
        continue;
      }
      try {
        const result = fn(this.#db);
        this.#db.exec("COMMIT");
        return result;
      } catch (e) {
        try {
          this.#db.exec("ROLLBACK");
        } catch {
          // no transaction left to roll back
        }
        if (!isBusy(e) || Date.now() > deadline) throw e;
        await sleep(wait);
      }
    }
  }

  /** Creates the tables (the harness, once, before any member starts). */
  async init(): Promise<void> {
    await this.transaction((db) => {
      db.exec("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, value TEXT NOT NULL, version INTEGER NOT NULL)");
      db.exec(
        "CREATE TABLE IF NOT EXISTS writes (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, " +
          "partition INTEGER NOT NULL, offset INTEGER NOT NULL, value TEXT NOT NULL, member TEXT NOT NULL, " +
          "owner TEXT NOT NULL, owner_since INTEGER NOT NULL, applied INTEGER NOT NULL, at INTEGER NOT NULL)",
      );
    });
  }

  /**
   * Writes a record's value to its key's row and logs the attempt, in one transaction.
   * Guarded: only when the record's offset is newer than the row's version. Returns
   * whether the row changed.
   */
  async write(w: WriteAttempt, guarded: boolean): Promise<boolean> {
    return await this.transaction((db) => {
      const { changes } = db.run(guarded ? GUARDED_UPSERT : UNGUARDED_UPSERT, [w.key, w.value, w.offset]);
      const applied = changes > 0;
      db.run(
        "INSERT INTO writes (key, partition, offset, value, member, owner, owner_since, applied, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [w.key, w.partition, w.offset, w.value, w.member, w.owner, w.ownerSince, applied ? 1 : 0, Date.now()],
      );
      return applied;
    });
  }

  /** How many write attempts were logged. */
  async writeCount(): Promise<number> {
    return await this.transaction((db) => Number(db.get("SELECT count(*) AS n FROM writes")?.n ?? 0));
  }

  /** The distinct values some write attempt carried. */
  async writtenValues(): Promise<Set<string>> {
    return await this.transaction((db) => new Set(db.all("SELECT DISTINCT value FROM writes").map((r) => String(r.value))));
  }

  /** Every write attempt, in commit order. */
  async writes(): Promise<WriteRow[]> {
    return await this.transaction((db) =>
      db.all("SELECT * FROM writes ORDER BY seq").map((r) => ({
        seq: Number(r.seq),
        key: String(r.key),
        partition: Number(r.partition),
        offset: Number(r.offset),
        value: String(r.value),
        member: String(r.member),
        owner: String(r.owner),
        ownerSince: Number(r.owner_since),
        applied: Number(r.applied) === 1,
        at: Number(r.at),
      }))
    );
  }

  /** The final value of every row, by key. */
  async rows(): Promise<Map<string, string>> {
    return await this.transaction((db) =>
      new Map(db.all("SELECT key, value FROM rows").map((r) => [String(r.key), String(r.value)]))
    );
  }

  /** Closes the connection. */
  close(): void {
    this.#db.close();
  }
}
