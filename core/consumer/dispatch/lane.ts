/**
 * A partition of the current assignment inside the dispatcher: its state, counters,
 * queues (ready, retry, unblocked, per-key chains, waiting) and idle waiters.
 *
 * Under `key` ordering the lane keeps only the keys in flight (`keys`, held_keys.ts: at most
 * `maxInFlightPerPartition`, whatever the lane retains); a record whose key is held waits
 * on the holder's chain (key_chains.ts).
 *
 * @module
 */
import type { TopicPartition } from "../port/mod.ts";
import type { PartitionState } from "../port/mod.ts";
import type { CompletedSet } from "../../tracker/completed_set/mod.ts";
import type { Tracker } from "../../tracker/tracker.ts";
import { Fifo } from "./fifo.ts";
import { HeldKeys } from "./held_keys.ts";
import { ReadyQueue } from "./ready_queue.ts";
import type { Work } from "./work.ts";

/** A partition of the current assignment inside the dispatcher. */
export class Lane<M> implements TopicPartition {
  /** `active`, `draining` or `stopped`; an ended lane is removed from the dispatcher. */
  state: PartitionState = "active" as PartitionState;
  /** Whether the lane ended (revoked, lost or shut down). */
  ended = false;
  /** Completions are no longer accepted (the shutdown grace or a revoke's drain bound expired). */
  abandoned = false;
  /** Paused at the client (backpressure, or stopped). */
  paused = false;
  /** Paused by the user (`consumer.pause()`): no record of it starts, no batch is taken, fetching is paused. */
  userPaused = false;
  /** When the user's pause began. */
  userPausedAt = 0;
  /** Paused at the client until the committed metadata is read (no batch is taken meanwhile). */
  held = false;
  /** What an earlier owner's commit claimed finished, while delivery has not passed it. */
  claim: CompletedSet | undefined;
  /** When the current pause began. */
  pausedAt = 0;
  /** Paused time of finished pauses. */
  pausedMs = 0;
  /** Records in flight: running (handler or dead-letter producer) or waiting to retry. */
  inFlight = 0;
  /** Records running (handler or dead-letter producer). */
  active = 0;
  /** A draining lane's deadline (`Date.now()` ms): failed records may retry until then. */
  drainUntil = 0;
  /** Highest offset ever started in this lane (-1: none). A drain runs the queued records below it. */
  maxStarted: number = -1;
  /** Retained entries, as last read from the tracker. */
  retained = 0;
  /** Latency of the last acknowledged commit that carried this partition. */
  lastCommitLatencyMs: number | undefined;
  /** Aborted when the lane ends (or the shutdown grace expires). */
  readonly controller: AbortController = new AbortController();
  /**
   * Records waiting to run, in delivery order (under `key` ordering, keys not looked at yet);
   * a delivered batch's records get their `Work` only as they are taken (ready_queue.ts).
   */
  readonly ready: ReadyQueue<M, Lane<M>> = new ReadyQueue<M, Lane<M>>();
  /** Records whose retry delay passed: they run before `ready`. */
  readonly retry: Fifo<Work<M, Lane<M>>> = new Fifo<Work<M, Lane<M>>>();
  /**
   * `key` ordering: records that took their key when the record before them settled, waiting
   * for an in-flight slot; they run before `ready` (each is below every record in `ready`).
   */
  readonly unblocked: Fifo<Work<M, Lane<M>>> = new Fifo<Work<M, Lane<M>>>();
  /**
   * `key` ordering: the keys held → the record holding it (in flight, or in `unblocked`);
   * records of that key set aside behind it hang on its chain (`Work.behind`).
   */
  readonly keys: HeldKeys<Work<M, Lane<M>>>;
  /** `key` ordering: records set aside on the chains of held keys. */
  parked = 0;
  /** Records waiting for their retry timer. */
  readonly waiting: Set<Work<M, Lane<M>>> = new Set();
  #idle: Array<() => void> = [];

  /**
   * A lane for one partition assignment.
   * @param topic topic name
   * @param partition partition number
   * @param tracker the assignment's tracker
   * @param sameKey `key` ordering: whether two records whose key hashes are equal have the same key
   */
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly tracker: Tracker,
    sameKey: (a: Work<M, Lane<M>>, b: Work<M, Lane<M>>) => boolean = () => true,
  ) {
    this.keys = new HeldKeys<Work<M, Lane<M>>>(sameKey);
  }

  /** Records waiting for a worker. */
  get queued(): number {
    return this.ready.length + this.retry.length + this.unblocked.length + this.parked;
  }

  /** Whether nothing of this lane runs or waits to run (what a drain waits for). */
  get isIdle(): boolean {
    return this.active === 0 && this.ready.length === 0 && this.retry.length === 0 && this.keys.size === 0 &&
      this.unblocked.length === 0 && this.parked === 0 && this.waiting.size === 0;
  }

  /** Resolves once the lane {@link isIdle}: nothing runs and nothing that is to run is queued. */
  idle(): Promise<void> {
    if (this.isIdle) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** @internal wakes {@link idle} waiters once the lane is idle */
  notifyIdle(): void {
    if (this.#idle.length === 0 || !this.isIdle) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const w of waiters) w();
  }
}
