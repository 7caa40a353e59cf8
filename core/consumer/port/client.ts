/**
 * The client port: the small surface a Kafka client binding implements so the
 * `ParallelConsumer` can drive it. The runner never imports a client; a binding
 * (e.g. `adapters/kafkajs/mod.ts`) translates its client's batches, pauses, commits and
 * group events to and from these calls.
 *
 * @module
 */

/** One partition of one topic. */
export interface TopicPartition {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
}

/** A batch of records of one partition, as the client delivered it. */
export interface DeliveredBatch<M> {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
  /** The records, in offset order (the client's own message objects, passed to the handler as is). */
  readonly messages: readonly M[];
  /** Offset of each record (same length as `messages`), strictly increasing; never changed after delivery (the runner may read it later). */
  readonly offsets: ArrayLike<number>;
  /**
   * The batch's next position: past its last record, and past any control records or
   * aborted messages the client filtered out (KafkaJS: `batch.lastOffset() + 1`).
   */
  readonly next: number;
  /**
   * Optional: the partition's log end offset (high watermark) as the fetch that brought
   * this batch saw it (KafkaJS `batch.highWatermark`). The lag in `metrics()` reads it;
   * omit it when the client did not say.
   */
  readonly endOffset?: number;
}

/** A partition's log end offset (high watermark) as the client saw it. */
export interface EndOffset extends TopicPartition {
  /** The offset the next record produced to the partition will get. */
  readonly endOffset: number;
}

/** One partition's commit as sent to the broker. */
export interface CommitOffset extends TopicPartition {
  /** The next offset to read (the safe position). */
  readonly offset: number;
  /** Optional per-partition commit metadata (broker limit `offset.metadata.max.bytes`, default 4 KiB). */
  readonly metadata?: string;
}

/** A partition's committed position as the broker holds it, read at assignment. */
export interface CommittedPosition extends TopicPartition {
  /** The committed offset; `undefined` when the group has none for it. */
  readonly offset: number | undefined;
  /** The metadata stored with that offset (`null`/`undefined`: none). */
  readonly metadata: string | null | undefined;
}

/** What the dead-letter producer receives besides the record itself. */
export interface DeadLetterInfo extends TopicPartition {
  /** The failed record's offset. */
  readonly offset: number;
  /** The last error the handler threw. */
  readonly error: unknown;
  /** How many times the handler ran. */
  readonly attempts: number;
  /** Aborted when the record is abandoned (partition revoked or lost, shutdown grace over): stop waiting for the cluster. */
  readonly signal?: AbortSignal;
  /**
   * With tracing: the trace context the dead letter carries on (e.g. W3C `traceparent`), set
   * over the record's own headers of the same names.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/** How a binding's revoke relates to its client's rejoin ({@link ClientSink.revoking}). */
export interface RevokeOptions {
  /** Whether the client waits for the revoke before it rejoins (default `true`). */
  readonly awaited?: boolean;
}

/**
 * What a binding reports to the runner. Every call is synchronous except
 * {@link ClientSink.revoking}, whose promise the binding may await (or not, when its
 * client has no awaited revoke callback).
 */
export interface ClientSink<M> {
  /**
   * A new assignment (a new group generation) took effect: every earlier assignment
   * has ended. Partitions whose orderly revoke began with {@link revoking} and that
   * stay assigned get their final commit best-effort; every other earlier partition is
   * lost (never committed again). Call it before delivering any batch of the new
   * assignment.
   *
   * `committed`, when the binding can read them, resolves to the partitions' committed
   * offsets and metadata: the runner then pauses the new partitions (through
   * {@link ConsumerClient.pause}, synchronously, inside this call) and takes no batch of
   * theirs until it settles, so that records an earlier owner's completed set claims
   * finished are skipped from the first batch on. A rejection only costs the claims.
   *
   * @throws {InvalidArgumentError} for a partition listed twice, an empty or non-string
   *   topic, or a partition that is not an integer in [0, 2^31): the message names it and
   *   the running assignment is left exactly as it was
   * `incremental` (a cooperative or KIP-848 rebalance): `partitions` are added to the
   * current assignment and every partition already assigned carries on untouched (its
   * tracker, in-flight work and pauses stay); partitions that leave are named in
   * {@link revoking} or {@link lost} instead. An empty incremental assignment is a no-op.
   */
  assigned(
    partitions: readonly TopicPartition[],
    committed?: Promise<readonly CommittedPosition[]>,
    incremental?: boolean,
  ): void;
  /**
   * An orderly rebalance began (the client still owns its partitions for now): stop
   * dispatching, drain within a bound, commit best-effort. Resolves when done.
   *
   * `awaited` (default `true`): whether the client waits for this promise before it rejoins
   * the group. When it does not (KafkaJS when it found the rebalance itself), only a commit
   * sent now can still land (its JoinGroup follows within milliseconds and ends the
   * generation): the runner commits at once and starts nothing more — queued records, those
   * below the highest started offset included, are left to the next owner, since what they
   * would finish could not be committed and would be redone anyway. Running records finish.
   */
  revoking(partitions?: readonly TopicPartition[], options?: RevokeOptions): Promise<void>;
  /** The partitions (default: all) were lost, e.g. the session expired: never commit them again. */
  lost(partitions?: readonly TopicPartition[]): void;
  /**
   * A fetched batch. Returns `true` when it was registered: the binding then moves its
   * fetch position past `next`. `false`: not taken (partition paused, draining,
   * stopped or not assigned); the binding leaves its fetch position alone so the batch
   * is delivered again after a resume or reassignment.
   */
  deliver(batch: DeliveredBatch<M>): boolean;
  /**
   * Log end offsets the client saw outside a delivered batch (a fetch that brought no
   * records still carries its partitions' high watermarks), for the lag in `metrics()`.
   * Partitions not assigned are ignored.
   * @throws {InvalidOffsetError} for an end offset that is not an integer in [0, 2^53)
   */
  endOffsets?(ends: readonly EndOffset[]): void;
  /** The client failed for good (it will not deliver or commit again). */
  failed(error: unknown): void;
  /**
   * An attempt to reach the cluster failed (connect, group join, coordinator lookup, a
   * produce or commit without a connection): the consumer is waiting for the cluster.
   * Returns the milliseconds to wait before the next attempt (capped backoff). When the
   * wait passes `maxUnavailableMs` the runner aborts {@link signal} and ends the consumer.
   * @param error the attempt's error
   * @param brokers broker addresses the error names
   */
  unavailable(error: unknown, brokers?: readonly string[]): number;
  /** The cluster answered (a join, an acknowledged commit or produce): an outage, if any, is over. */
  available(): void;
  /**
   * The group coordinator accepted this member in its current generation (a heartbeat,
   * or another request the coordinator checks against the generation, succeeded), with a
   * request sent at `sentAt` (`Date.now()` clock, ms): every partition of the current
   * assignment was still this member's when that request reached the coordinator. Not an
   * answer to a request sent earlier, nor a failed one (a member whose session expired
   * is answered UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS, and rejoins).
   *
   * Exactly-once mode waits for it: a partition reset after a failed or fenced transaction
   * makes no new producer (whose initialisation would fence the partition's owner, should
   * this member be a zombie) until an `owned` with a request sent after the failure, or a
   * new assignment, says the partition is still this member's. A binding used with a
   * `TransactionalPort` calls it; without it such a partition waits for the next assignment.
   */
  owned?(sentAt: number): void;
  /**
   * Aborted when the consumer stops waiting: shutdown began, or it gave up on the
   * cluster. A binding's start and its waits for the cluster end at once then.
   */
  readonly signal: AbortSignal;
}

/** What one direct attempt to reach the cluster found (see {@link ConsumerClient.probe}). */
export interface ProbeResult {
  /** The broker addresses tried. */
  brokers: readonly string[];
  /** Why the last one tried failed; `undefined` when one was reached (or none could be tried). */
  error: unknown;
}

/**
 * The port a Kafka client binding implements.
 *
 * Rules the runner relies on: a partition's batches arrive in offset order, at most one
 * at a time; `commit` resolves only when the broker acknowledged every offset in it and
 * rejects on failure or uncertainty; `commit` is only ever called with partitions of the
 * current assignment (the binding should still refuse any other).
 */
export interface ConsumerClient<M> {
  /** Connects, subscribes and starts delivering to `sink`; resolves once consuming has begun. */
  start(sink: ClientSink<M>): Promise<void>;
  /** Stops fetching these partitions (keeps polling and heartbeating). */
  pause(partitions: readonly TopicPartition[]): void;
  /** Fetches these partitions again. */
  resume(partitions: readonly TopicPartition[]): void;
  /** Commits; resolves only when the broker acknowledged, rejects otherwise. */
  commit(offsets: readonly CommitOffset[]): Promise<void>;
  /** Stops fetching every partition, for good (shutdown). Already delivered batches stay valid. */
  stopFetching(): void;
  /** Leaves the group and disconnects. */
  close(): Promise<void>;
  /** The record's key for `ordering: "key"`; `undefined` = no key (not ordered against other records). */
  keyOf?(message: M): string | undefined;
  /**
   * Optional, beside {@link keyOf}: a 32-bit hash of the record's key, equal for records
   * whose `keyOf` keys are equal, `undefined` exactly when `keyOf` is. Under `key` ordering
   * the dispatcher's keys in flight and the batch handler's check that a batch holds no key
   * twice read it instead of `keyOf`, so that a binding whose keys are bytes makes no string
   * per record (both compare the keys themselves, through `keyOf`, only when two hashes are
   * equal). Without it they hash `keyOf`'s string.
   */
  keyHashOf?(message: M): number | undefined;
  /** Produces the record to the dead-letter topic; resolves only when the broker acknowledged. */
  deadLetter?(message: M, info: DeadLetterInfo): Promise<void>;
  /**
   * Called once with each partition assignment's record signal (the `signal` of its
   * records' contexts) before any handler sees it; the Node bindings lift its listener
   * limit here, so that a handler may pass the signal on with many records in flight.
   */
  recordSignal?(signal: AbortSignal): void;
  /**
   * One attempt to reach each bootstrap broker, outside the client's own retries. Called
   * only when the consumer gives up before the client reported any failure (its own
   * retries outlast `cluster.maxUnavailableMs`), so that the error still names the
   * brokers and a cause. Must settle within a few seconds and leave nothing running.
   */
  probe?(): Promise<ProbeResult>;
  /**
   * Optional: the log end offsets (high watermarks) of these partitions, asked of the
   * cluster with the client's own offset query. The runner calls it at the commit interval,
   * one call at a time, only for partitions no fetch reports now (paused, or whose log end
   * it has not seen yet), so that their lag in `metrics()` still grows as records are
   * produced. A rejection changes nothing.
   */
  endOffsets?(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]>;
}
