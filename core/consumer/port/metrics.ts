/**
 * What a running consumer reports: a snapshot per partition and totals
 * ({@link ConsumerMetrics}), and event hooks ({@link ConsumerEvents}) for commits,
 * pauses, resumes, retries, dead letters and errors.
 *
 * @module
 */
import type { CommitOffset, TopicPartition } from "./client.ts";
import type { TransactionEvent, TransactionMetrics } from "./transactions.ts";
import type { AvailableEvent, ClusterMetrics, UnavailableEvent } from "./cluster.ts";

/** The state of a partition's lane. */
export type PartitionState = "active" | "draining" | "stopped";

/** One partition of the current assignment. */
export interface PartitionMetrics extends TopicPartition {
  /** `active`, `draining` (revoke or shutdown in progress) or `stopped` (a record failed for good). */
  state: PartitionState;
  /** Whether fetching is paused for backpressure (or because the partition stopped). */
  paused: boolean;
  /** Whether it is paused by the user (`consumer.pause()`): no record of it starts and fetching is paused. */
  pausedByUser: boolean;
  /** Milliseconds spent paused during this assignment, the current pause included. */
  pausedMs: number;
  /** Records registered and not complete (queued, running or waiting to retry). */
  pending: number;
  /** Completed records held behind an unfinished earlier one. */
  blocked: number;
  /** `pending + blocked`: the entries this partition retains; the high and low marks apply to it. */
  retained: number;
  /** Records waiting for a worker. */
  queued: number;
  /** Records handed to the handler (or the dead-letter producer) and not settled, plus those waiting to retry. */
  inFlight: number;
  /** Offset of the oldest unfinished record, if any. */
  oldestPendingOffset: number | undefined;
  /** Milliseconds since that record's batch was delivered, if any. */
  oldestPendingAgeMs: number | undefined;
  /** Where delivery has reached. */
  delivered: number | undefined;
  /** The resume position justified by completed work. */
  safe: number | undefined;
  /** The last offset the broker acknowledged for this assignment. */
  confirmed: number | undefined;
  /**
   * The partition's log end offset (high watermark: the offset the next record produced
   * to it gets) as the client last saw it: from its fetches, and for a partition no fetch
   * reports (paused) from the client's offset query at the commit interval, where the
   * binding has one. `undefined` until seen in this assignment.
   */
  endOffset: number | undefined;
  /**
   * Records behind the log end: `endOffset − confirmed` (what Kafka's tools call the
   * consumer group lag), never below 0. Before this assignment's first acknowledged commit
   * it is measured from the group's committed offset as read at assignment, else from where
   * the assignment began reading (where the reset policy placed it). `undefined` while
   * `endOffset` is, or while none of those is known.
   */
  lag: number | undefined;
  /**
   * The part of `lag` delivered but not yet behind the safe position: `delivered − safe`
   * (offsets, gaps included), records fetched and not yet finished in order. Together with
   * `safe − confirmed` (finished, not yet committed) and `endOffset − delivered` (not yet
   * fetched) it makes up `lag`. `undefined` before the first delivery.
   */
  processingLag: number | undefined;
  /** Latency of the last acknowledged commit that carried this partition. */
  lastCommitLatencyMs: number | undefined;
}

/** A snapshot of a consumer. */
export interface ConsumerMetrics {
  /** Partitions of the current assignment. */
  partitions: PartitionMetrics[];
  /** Handler calls running now (bounded by `concurrency`). */
  running: number;
  /** Entries retained over all partitions. */
  retained: number;
  /** The sum of the partitions' `lag` (those whose lag is known): records this member is behind the log end. */
  lag: number;
  /** Records completed (handler succeeded or dead letter acknowledged) since start. */
  completed: number;
  /** Records delivered again that an earlier owner's commit had claimed finished: completed without running the handler. */
  skipped: number;
  /** The whole consumer is paused by the user (`consumer.pause()` without partitions); see each partition's `pausedByUser` for pauses of single partitions. */
  pausedByUser: boolean;
  /** No record starts: no commit was acknowledged for `commit.stallMs` (or one was refused, or the cluster is out of reach) although records finished. */
  stalled: boolean;
  /** Handler failures (each failed attempt counts). */
  failures: number;
  /** Retries scheduled. */
  retries: number;
  /** Records dead-lettered. */
  deadLettered: number;
  /** With `stuck` only: records found unfinished past `stuck.maxPendingMs` (0 without it). */
  stuck: number;
  /** Commits acknowledged. */
  commits: number;
  /** Commits failed or uncertain. */
  commitFailures: number;
  /** Latency of the last acknowledged commit. */
  lastCommitLatencyMs: number | undefined;
  /** Largest commit latency seen. */
  maxCommitLatencyMs: number | undefined;
  /** Exactly-once mode only: transactions begun, committed, aborted, fenced, their sizes and latencies. */
  transactions?: TransactionMetrics;
  /** With `rateLimit` only: the limit, the tokens available now, and how often a start had to wait for one. */
  rateLimit?: { perSecond: number; burst: number; tokens: number; waits: number };
  /** Whether the cluster answers: `state` `"waiting"` during an outage, since when, the attempts and the last error. */
  cluster: ClusterMetrics;
}

/** Payload of the `commit` event: an acknowledged commit. */
export interface CommitEvent {
  /** What was committed. */
  offsets: readonly CommitOffset[];
  /** Milliseconds from sending to the acknowledgement. */
  latencyMs: number;
}

/** Payload of the `pause` event. */
export interface PauseEvent extends TopicPartition {
  /** Why: over the partition's high mark, over the total bound, the partition stopped, or `consumer.pause()`. */
  reason: "high-water-mark" | "max-buffered" | "stopped" | "user";
  /** Entries the partition retained when it paused. */
  retained: number;
}

/** Payload of the `resume` event (fetching resumed: after backpressure, or `consumer.resume()`). */
export interface ResumeEvent extends TopicPartition {
  /** How long the pause lasted. */
  pausedMs: number;
  /** Entries the partition retained when it resumed. */
  retained: number;
}

/** Payload of the `retry` event. */
export interface RetryEvent extends TopicPartition {
  /** The failed record's offset. */
  offset: number;
  /** The attempt that failed (1 = the first call). */
  attempt: number;
  /** Milliseconds until the next attempt. */
  delayMs: number;
  /** Whether the handler chose the delay (its error carried `retryAfterMs` or `retryAt`, capped by `retry.maxDelayMs`) rather than the backoff. */
  requested: boolean;
  /** What the handler threw. */
  error: unknown;
}

/** Payload of the `deadLetter` event: the dead-letter produce was acknowledged. */
export interface DeadLetterEvent extends TopicPartition {
  /** The record's offset. */
  offset: number;
  /** How many times the handler ran. */
  attempts: number;
  /** The last error the handler threw. */
  error: unknown;
}

/** Payload of the `error` event. */
export interface ErrorEvent {
  /** What failed: a commit, a partition (stopped), the client, or an event listener. */
  kind: "commit" | "partition-stopped" | "dead-letter" | "client" | "listener" | "committed-read";
  /** The error. */
  error: unknown;
  /** The partition concerned, if any. */
  topic?: string;
  /** The partition concerned, if any. */
  partition?: number;
  /** The record concerned, if any. */
  offset?: number;
}

/** Payload of the `stall` event: dispatching was held (commits stopped landing) or released. */
export interface StallEvent {
  /** `true`: held from now on; `false`: released by an acknowledged commit. */
  stalled: boolean;
  /** Milliseconds since the last acknowledged commit. */
  sinceMs: number;
}

/**
 * Payload of the `claim` event: at assignment, the partition's committed metadata was
 * read back. Either it verified as a completed set (`finished` records above `offset`
 * are skipped when delivered again) or it was ignored (`ignored` says why: those records
 * run again; nothing unfinished is ever skipped).
 */
export interface ClaimEvent extends TopicPartition {
  /** The committed offset the metadata was read with (`undefined`: the group had none). */
  offset: number | undefined;
  /** Offsets above `offset` the set claims finished (gaps included); 0 when ignored. */
  finished: number;
  /** Where the claim ends: every offset from here on runs again. */
  end: number | undefined;
  /** Why the metadata was not used (empty, written by another client, corrupt, bound to another offset…). */
  ignored?: string;
}

/**
 * Every event of a consumer and its payload; listen with `consumer.on(event, listener)`
 * (returns a function that removes the listener) or the `on` option. Listeners run
 * synchronously where the event happens; one that throws is reported as an `error` of
 * kind `listener` and never breaks the consumer.
 *
 * | event        | when                                                                 | payload |
 * |--------------|----------------------------------------------------------------------|---------|
 * | `commit`     | the broker acknowledged a commit (periodic, revoke, shutdown)        | {@link CommitEvent}: `offsets`, `latencyMs` |
 * | `pause`      | fetching a partition paused: over its high mark, over the total bound, the partition stopped, or `consumer.pause()` (`user`) | {@link PauseEvent}: `topic`, `partition`, `reason`, `retained` |
 * | `resume`     | a paused partition's fetching resumed (it fell to its low mark, or `consumer.resume()`) | {@link ResumeEvent}: `topic`, `partition`, `pausedMs`, `retained` |
 * | `retry`      | a handler attempt failed and the record runs again after a delay     | {@link RetryEvent}: `topic`, `partition`, `offset`, `attempt`, `delayMs`, `error` |
 * | `deadLetter` | the dead-letter produce of a record was acknowledged (the record now counts as complete) | {@link DeadLetterEvent}: `topic`, `partition`, `offset`, `attempts`, `error` |
 * | `error`      | something failed; see {@link ErrorEvent} `kind`                      | {@link ErrorEvent}: `kind`, `error`, `topic?`, `partition?`, `offset?` |
 * | `stall`      | no commit was acknowledged for `commit.stallMs` (or one was refused, or the cluster is out of reach) while records finished: no record starts until one is (or that hold ended) | {@link StallEvent}: `stalled`, `sinceMs` |
 * | `stuck`      | with the `stuck` option: a record was unfinished `maxPendingMs` after its first attempt started; what happens to it is `action` | {@link StuckEvent}: `topic`, `partition`, `offset`, `pendingMs`, `attempt`, `action` |
 * | `transaction`| exactly-once mode: one partition's transaction ended (committed, aborted or fenced) | {@link TransactionEvent}: `topic`, `partition`, `outcome`, `offset`, `records`, `latencyMs`, `error?` |
 * | `claim`      | at assignment, a partition's committed metadata was read back: used as a completed set, or ignored with the reason | {@link ClaimEvent}: `topic`, `partition`, `offset`, `finished`, `end`, `ignored?` |
 * | `unavailable` | an attempt to reach the cluster failed (connect, join, coordinator, commit): the consumer waits and tries again | {@link UnavailableEvent}: `sinceMs`, `attempts`, `lastError`, `brokers`, `delayMs` |
 * | `available`  | the cluster answered again after an outage                           | {@link AvailableEvent}: `downMs`, `attempts` |
 *
 * `error` kinds: `commit` (a commit failed or timed out: nothing moved, it is proposed
 * again), `dead-letter` (a dead-letter produce failed: retried, then the partition
 * stops), `partition-stopped` (a record failed for good; `error` is a
 * `PartitionStoppedError`, the partition's safe position stays below it), `client` (the
 * Kafka client failed: when it ends the consumer, `done` rejects), `listener` (a
 * listener threw), `committed-read` (the committed offsets could not be read at
 * assignment: no records are skipped, those above the committed offset run again).
 */
export interface ConsumerEvents {
  /** A commit was acknowledged by the broker. */
  commit: CommitEvent;
  /** A partition's fetching was paused (high mark, total bound, or the partition stopped). */
  pause: PauseEvent;
  /** A paused partition's fetching was resumed (it fell to its low mark). */
  resume: ResumeEvent;
  /** A failed record will run again after a delay. */
  retry: RetryEvent;
  /** A record's dead-letter produce was acknowledged (the record counts as complete). */
  deadLetter: DeadLetterEvent;
  /** Something failed that the consumer survives (or the client failure that ends it); see {@link ErrorEvent}. */
  error: ErrorEvent;
  /** A partition's committed metadata was read back at assignment (used or ignored). */
  claim: ClaimEvent;
  /** Dispatching was held because commits stopped landing, or released. */
  stall: StallEvent;
  /** A record was found stuck (the `stuck` option; not the commit `stall`). */
  stuck: StuckEvent;
  /** Exactly-once mode: one partition's transaction ended. */
  transaction: TransactionEvent;
  /** An attempt to reach the cluster failed: the consumer waits and tries again. */
  unavailable: UnavailableEvent;
  /** The cluster answered again after an outage. */
  available: AvailableEvent;
}

/** A listener of one event. */
export type Listener<T> = (payload: T) => void;

/** Listeners passed as an option: `{ on: { pause: (e) => …, error: (e) => … } }`. */
export type ConsumerListeners = { [K in keyof ConsumerEvents]?: Listener<ConsumerEvents[K]> };

/**
 * A small typed event hub. A listener that throws is reported as an `error` event of
 * kind `listener` (and never breaks the consumer).
 *
 * @example
 * ```ts
 * import { EventHub } from "./metrics.ts";
 * const hub = new EventHub();
 * const off = hub.on("pause", (e) => console.log("paused", e.topic, e.partition));
 * off();
 * ```
 */
export class EventHub {
  readonly #listeners: { [K in keyof ConsumerEvents]?: Array<Listener<ConsumerEvents[K]>> } = {};
  #observer: (<K extends keyof ConsumerEvents>(event: K, payload: ConsumerEvents[K], heard: boolean) => void) | undefined;

  /** Sees every emitted event after its listeners, and whether one heard it (the consumer's logger of unheard events). */
  observe(observer: <K extends keyof ConsumerEvents>(event: K, payload: ConsumerEvents[K], heard: boolean) => void): void {
    this.#observer = observer;
  }

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof ConsumerEvents>(event: K, listener: Listener<ConsumerEvents[K]>): () => void {
    const list = (this.#listeners[event] ??= []) as Array<Listener<ConsumerEvents[K]>>;
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Whether anything listens to `event` (lets hot paths skip building payloads). */
  has(event: keyof ConsumerEvents): boolean {
    return (this.#listeners[event]?.length ?? 0) > 0;
  }

  /** Calls every listener of `event` with `payload`. */
  emit<K extends keyof ConsumerEvents>(event: K, payload: ConsumerEvents[K]): void {
    const list = this.#listeners[event] as Array<Listener<ConsumerEvents[K]>> | undefined;
    const heard = list !== undefined && list.length > 0;
    if (heard) {
      for (const listener of [...list]) {
        try {
          listener(payload);
        } catch (error) {
          if (event !== "error") this.emit("error", { kind: "listener", error });
        }
      }
    }
    this.#observer?.(event, payload, heard);
  }
}

/** Payload of the `stuck` event. */
export interface StuckEvent {
  /** Topic of the record. */
  topic: string;
  /** Partition of the record. */
  partition: number;
  /** Offset of the record. */
  offset: number;
  /** Milliseconds since its first attempt started. */
  pendingMs: number;
  /** Its current attempt (1 = the first call). */
  attempt: number;
  /** What happens to it. */
  action: "dead-letter" | "stop" | "report";
}
