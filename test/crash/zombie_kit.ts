/**
 * What the zombie test's two members (zombie_member.ts through KafkaJS,
 * zombie_member_platformatic.ts through `@platformatic/kafka`) share: their command-line
 * config, the JSON lines they print, the SIGUSR2 stop inside a transaction, and the runner
 * options of the member (handler, commit interval, transaction settings, `tx` events), so
 * that the two differ only in how their client is made and wrapped.
 *
 * @module
 */
import process from "node:process";
import type { RecordContext, TransactionEvent } from "../../core/mod.ts";

/** A member's config (its one command-line argument, JSON). */
export interface ZombieConfig {
  name: string;
  brokers: string;
  topic: string;
  group: string;
}

/** This process's config, from its first argument. */
export const cfg = JSON.parse(process.argv[2] ?? "{}") as ZombieConfig;

/** Prints one JSON line (an event) to stdout, with the member's name and the time. */
export const say = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ member: cfg.name, at: Date.now(), ...o })}\n`);

// SIGUSR2 asks for a stop inside a transaction: the next transaction to commit stops this
// process (SIGSTOP to itself) just before its EndTxn goes out, as a pause in flight would.
let stopInTransaction = false;
process.on("SIGUSR2", () => void (stopInTransaction = true));

/** Wraps `txn.commit` so that, once SIGUSR2 asked for it, the process stops itself just before the EndTxn. */
export function stopBeforeCommit<T extends { commit(): Promise<unknown> }>(txn: T): T {
  const commit = txn.commit.bind(txn);
  txn.commit = () => {
    if (stopInTransaction) {
      stopInTransaction = false;
      say({ ev: "stopping" }); // stdout is a pipe: written before the stop
      process.kill(process.pid, "SIGSTOP");
    }
    return commit();
  };
  return txn;
}

/** The consumer's joins so far (a record's output carries the count when its attempt started). */
export const joins = { count: 0 };

/** The transactional settings of both members: 5 s per transaction, the broker's timeout 30 s. */
export const TRANSACTION = { timeoutMs: 5_000, transactionTimeoutMs: 30_000 } as const;

/**
 * The runner options both members run with: unordered, 16 at a time, commits every 500 ms
 * (interval mode, so completed records wait for their transaction), each record's handler
 * (20 ms) sending one output to `<topic>.out` (same partition) with headers `from`
 * (`<partition>:<offset>`), `by` (the member's name) and `join`; each transaction's
 * outcome printed as a `tx` line.
 */
export function memberOptions<M extends { key: string | Uint8Array | null; value: string | Uint8Array | null }>() {
  return {
    topics: [cfg.topic],
    fromBeginning: true,
    ordering: "unordered" as const,
    concurrency: 16,
    commit: { mode: "interval" as const, intervalMs: 500 },
    on: {
      transaction: (e: TransactionEvent) =>
        say({
          ev: "tx",
          outcome: e.outcome,
          partition: e.partition,
          offset: e.offset,
          records: e.records,
          ...(e.error !== undefined ? { error: String(e.error).slice(0, 160) } : {}),
        }),
    },
    handler: async (message: M, { partition, offset, send }: RecordContext) => {
      const join = joins.count;
      await new Promise((r) => setTimeout(r, 20));
      send!({
        topic: `${cfg.topic}.out`,
        partition,
        key: message.key,
        value: message.value,
        headers: { from: `${partition}:${offset}`, by: cfg.name, join: String(join) },
      });
    },
  };
}
