/**
 * Exactly-once consume → process → produce, the client-neutral half: per-record staging
 * of outputs, one transaction per partition per commit cycle, and rollback.
 *
 * Invariants it keeps:
 * - a record's outputs are staged per attempt (a failed attempt's outputs are dropped)
 *   and join a partition's ready list only when its tracker accepted the completion, in
 *   the same tick; a proposal is made and its ready lists are taken in one tick too
 *   (CommitScheduler calls `send` synchronously after `propose`), so a transaction holds
 *   the outputs of exactly the records its offset and completed set call finished;
 * - outputs of records at or past the end of the committed completed set (a set cut to
 *   its budget) stay ready for a later transaction: never committed before their claim;
 * - a partition whose transaction failed, timed out or was fenced is reset: its tracker
 *   and ready outputs are discarded; once this member is known to still own the partition
 *   in the current generation (never before: a zombie's new producer would fence the
 *   rightful owner), its producer is replaced (which fences the old one and settles any
 *   transaction it left open), and the committed offset and completed set are read again
 *   and fetching seeks back to them. So `confirmed` and the records'
 *   completion roll back to what the broker holds, and the records are redone;
 * - in this mode the consumer's own memory of what it finished (Frontier.recall) is never
 *   used: only a committed transaction proves a record's outputs exist.
 *
 * The Kafka plumbing is behind {@link TransactionalPort} (KafkaJS: adapters/kafkajs/transactions.ts).
 *
 * @module
 */
import type { CommitOffset, CommittedPosition, TopicPartition } from "./client.ts";
import { decodeCompletedSet } from "../../tracker/completed_set/mod.ts";
import { InvalidArgumentError, OffsetFrontierError, describe } from "../../errors.ts";

/** A record to produce, as a handler passes it to `send`. */
export interface OutputRecord {
  /** Topic to produce to. */
  readonly topic: string;
  /** Partition; default: the client's partitioner (by key). */
  readonly partition?: number;
  /** Key. */
  readonly key?: string | Uint8Array | null;
  /** Value. */
  readonly value: string | Uint8Array | null;
  /** Headers. */
  readonly headers?: Readonly<Record<string, string | Uint8Array>>;
  /** Timestamp (ms since the epoch, as a decimal string); default: the producer's clock. */
  readonly timestamp?: string;
}

/** What a transactional handler can do besides reading its record's context. */
export interface TransactionalSend {
  /**
   * Stages records to produce: they are committed, in one transaction with this record's
   * completion, only if this attempt succeeds; a failed attempt's records are dropped.
   */
  send(...records: OutputRecord[]): void;
}

/** One partition's transaction of a commit cycle. */
export interface PartitionTransaction extends CommitOffset {
  /** The outputs of the records this commit newly calls finished. */
  readonly outputs: readonly OutputRecord[];
}

/** How one partition's transaction ended. */
export type TransactionOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly fenced: boolean; readonly error: unknown };

/** A partition to open at assignment or reset. */
export interface OpenPartition extends TopicPartition {
  /**
   * `true`: this consumer owned the partition in the previous generation and nobody can
   * have owned it in between; the binding may then keep a producer that has no unsettled
   * transaction instead of fencing anew. The runner passes `false` unless a client can
   * prove that (KafkaJS does not report the generation, so with it every assignment fences).
   */
  readonly kept: boolean;
  /** Where to seek when the group has no committed offset (the previous assignment's first offset), if known. */
  readonly fallback?: number;
}

/** What a client binding implements for the transactional mode. */
export interface TransactionalPort {
  /**
   * Takes authority over the partitions: one transactional producer each, initialised
   * (which aborts, or waits out, whatever an earlier owner left open and fences it);
   * then reads the committed offsets and metadata and seeks fetching back to them.
   * Retries until it succeeds or `signal` aborts (the partition ended); rejects then.
   */
  open(partitions: readonly OpenPartition[], signal: AbortSignal): Promise<readonly CommittedPosition[]>;
  /** Runs each partition's transaction (outputs, then offset and metadata, then commit), each bounded by `timeoutMs`. */
  commit(transactions: readonly PartitionTransaction[], timeoutMs: number): Promise<readonly TransactionOutcome[]>;
  /** The partitions are no longer ours: close their producers (an open transaction is aborted or left to be fenced). */
  release(partitions: readonly TopicPartition[]): Promise<void>;
  /** Closes every producer (shutdown). */
  close(): Promise<void>;
  /** The dead letter of a record, produced in the record's transaction. */
  deadLetter?(
    message: unknown,
    info: { topic: string; partition: number; offset: number; error: unknown; attempts: number; headers?: Readonly<Record<string, string>> },
  ): OutputRecord;
}

/** Options of the transactional mode. */
export interface TransactionalOptions {
  /** A partition's transaction (or its abort) that has not ended after this long fails, and the partition is reset. Default 10,000 ms. */
  timeoutMs?: number;
}

/** Payload of the `transaction` event: one partition's transaction ended. */
export interface TransactionEvent extends TopicPartition {
  /** `committed`, `aborted` (failed or timed out: nothing of it counts) or `fenced` (another owner took the partition). */
  outcome: "committed" | "aborted" | "fenced";
  /** The offset it committed or would have. */
  offset: number;
  /** Output records it held. */
  records: number;
  /** Milliseconds from begin to end. */
  latencyMs: number;
  /** The error, when not committed. */
  error?: unknown;
}

/** Totals of the transactional mode. */
export interface TransactionMetrics {
  /** Transactions begun (one per partition per commit cycle). */
  begun: number;
  /** Committed. */
  committed: number;
  /** Aborted: failed or timed out. */
  aborted: number;
  /** Fenced: another owner's producer took over the partition. */
  fenced: number;
  /** Output records committed. */
  records: number;
  /** Output records of the last committed transaction. */
  lastSize: number | undefined;
  /** Latency of the last committed transaction. */
  lastLatencyMs: number | undefined;
  /** Largest latency of a committed transaction. */
  maxLatencyMs: number | undefined;
  /** Partitions reset after a failed transaction (records redone). */
  resets: number;
  /** Outputs staged by completed records, not committed yet. */
  ready: number;
  /**
   * Partitions reset after a failed transaction that wait, held and without a producer,
   * until this member is known to still own them (an answered heartbeat or a new assignment).
   */
  waiting: number;
}

/** A transaction failed, timed out or was fenced: nothing of it counts and its partitions run again from the committed offset. */
export class TransactionFailedError extends OffsetFrontierError {}

/** One completed record's outputs, in completion order. */
interface Ready {
  readonly offset: number;
  readonly outputs: readonly OutputRecord[];
}

/**
 * Staging and per-cycle batching for the transactional mode; keyed by an assignment
 * object (the runner's lane), so nothing of an ended assignment reaches a later one.
 *
 * @example
 * ```ts
 * import { TransactionStage } from "./transactions.ts";
 * const stage = new TransactionStage<object>();
 * const lane = {};
 * stage.completed(lane, 5, [{ topic: "out", value: "x" }]);
 * stage.take(lane, 6).length; // 1: offset 5 is below the claim's end 6
 * ```
 */
export class TransactionStage<A extends object> {
  readonly #ready = new Map<A, Ready[]>();
  #count = 0;

  /** Outputs staged by completed records and not taken yet. */
  get size(): number {
    return this.#count;
  }

  /** A record of `assignment` completed (its tracker accepted it): its outputs wait for the next transaction. */
  completed(assignment: A, offset: number, outputs: readonly OutputRecord[]): void {
    if (outputs.length === 0) return;
    let list = this.#ready.get(assignment);
    if (!list) this.#ready.set(assignment, list = []);
    list.push({ offset, outputs });
    this.#count += outputs.length;
  }

  /**
   * Takes the outputs of records below `end` (the committed claim's end: the safe
   * position, or the end of the completed set sent with it); the rest stay.
   */
  take(assignment: A, end: number): OutputRecord[] {
    const list = this.#ready.get(assignment);
    if (!list) return [];
    const out: OutputRecord[] = [];
    const keep: Ready[] = [];
    for (const r of list) {
      if (r.offset < end) out.push(...r.outputs);
      else keep.push(r);
    }
    if (keep.length === 0) this.#ready.delete(assignment);
    else this.#ready.set(assignment, keep);
    this.#count -= out.length;
    return out;
  }

  /** Drops the ready outputs of every assignment `ended` says is over (their records run again). */
  prune(ended: (assignment: A) => boolean): void {
    for (const a of [...this.#ready.keys()]) if (ended(a)) this.drop(a);
  }

  /** The assignment ended or was reset: its ready outputs are dropped (their records run again). */
  drop(assignment: A): void {
    const list = this.#ready.get(assignment);
    if (!list) return;
    for (const r of list) this.#count -= r.outputs.length;
    this.#ready.delete(assignment);
  }
}

/** Checks one output record; throws a typed error naming the value. */
export function checkOutput(record: unknown): OutputRecord {
  const r = record as OutputRecord;
  if (r === null || typeof r !== "object") throw new InvalidArgumentError(`send() takes records ({ topic, value, … }); got ${describe(record)}`);
  if (typeof r.topic !== "string" || r.topic.length === 0) {
    throw new InvalidArgumentError(`an output record's topic must be a non-empty string; got ${describe(r.topic)}`);
  }
  if (r.value !== null && typeof r.value !== "string" && !(r.value instanceof Uint8Array)) {
    throw new InvalidArgumentError(`an output record's value must be a string, Uint8Array or null; got ${describe(r.value)}`);
  }
  if (r.partition !== undefined && (!Number.isInteger(r.partition) || r.partition < 0)) {
    throw new InvalidArgumentError(`an output record's partition must be an integer ≥ 0; got ${describe(r.partition)}`);
  }
  return r;
}

/**
 * Where a commit's claim ends: the completed set's end when its metadata verifies, else
 * the offset itself (nothing above it is claimed).
 */
export function claimEnd(commit: CommitOffset): number {
  if (commit.metadata === undefined) return commit.offset;
  const d = decodeCompletedSet(commit.topic, commit.partition, commit.offset, commit.metadata);
  return d.ok ? Math.max(commit.offset, d.set.end) : commit.offset;
}

/** Validates {@link TransactionalOptions} and fills in the defaults. */
export function resolveTransactionalOptions(o: TransactionalOptions | undefined): Required<TransactionalOptions> {
  const timeoutMs = o?.timeoutMs ?? 10_000;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 1) {
    throw new InvalidArgumentError(`transactional.timeoutMs must be a finite number ≥ 1; got ${describe(timeoutMs)}`);
  }
  return { timeoutMs };
}

/** Fresh, zeroed {@link TransactionMetrics}. */
export function emptyTransactionMetrics(): TransactionMetrics {
  return {
    begun: 0,
    committed: 0,
    aborted: 0,
    fenced: 0,
    records: 0,
    lastSize: undefined,
    lastLatencyMs: undefined,
    maxLatencyMs: undefined,
    resets: 0,
    ready: 0,
    waiting: 0,
  };
}
