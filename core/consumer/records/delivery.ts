/**
 * Delivery: a batch from the client is registered whole in its partition's tracker, then
 * its records are skipped (an earlier owner's claim calls them finished), run right here
 * (the direct start, while a record may start without queueing), or queued for the
 * dispatcher. This is the hot path: nothing in it allocates per record beyond a two-field
 * {@link DirectContext} (records started here; one still in flight when its handler returns
 * gets its `Work` then). Queued records wait as one run of the batch; each gets its `Work`
 * when the dispatcher takes it (dispatch/ready_queue.ts).
 *
 * @module
 */
import type { ConsumerClient, DeliveredBatch } from "../port/mod.ts";
import type { CommitScheduler } from "../commits/mod.ts";
import { DirectContext } from "./direct_context.ts";
import { thenOf } from "./settlers.ts";
import type { DirectBatches } from "./direct_batch.ts";
import { type Dispatcher, type Lane, Work } from "../dispatch/mod.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { RecordRunner } from "./record_runner.ts";
import type { Handler } from "./record_context.ts";
import { CapacityError } from "../../errors.ts";
import type { CompletedSet } from "../../tracker/completed_set/mod.ts";
import { Completion } from "../../tracker/engine.ts";

// Handles of directly run records that finished, applied in one tracker call (Delivery.#runDirect).
let doneScratch = new Float64Array(1024);

/** What a {@link Delivery} reads and drives. */
export interface DeliveryInputs<M> {
  /** Runs once per record (called here by the direct start). */
  readonly handler: Handler<M>;
  /** Lanes, queues and the direct start's bounds. */
  readonly dispatcher: Dispatcher<M>;
  /** Told when the safe position moved. */
  readonly scheduler: CommitScheduler;
  /** Pauses a lane whose tracker is full. */
  readonly client: Pick<ConsumerClient<M>, "pause">;
  /** Settles attempts and keeps the record counters. */
  readonly records: RecordRunner<M>;
  /** Batches are taken only while the consumer is live. */
  readonly life: ConsumerLife;
  /** Whether records may start directly: not in exactly-once mode (its handlers need their staged context). */
  readonly direct: boolean;
  /** The batch handler's direct start, when records may start directly in batches. */
  readonly directBatches?: DirectBatches<M>;
}

/** Takes delivered batches (the client sink's `deliver`). */
export class Delivery<M> {
  readonly #handler: Handler<M>;
  readonly #dispatcher: Dispatcher<M>;
  readonly #scheduler: CommitScheduler;
  readonly #client: Pick<ConsumerClient<M>, "pause">;
  readonly #records: RecordRunner<M>;
  readonly #life: ConsumerLife;
  readonly #keyed: boolean; // records have keys (key ordering): their Works get their key hashes
  #direct: boolean;
  #directBatches: DirectBatches<M> | undefined;
  #inDirect = false; // #runDirect is on the stack

  /**
   * Delivery over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: DeliveryInputs<M>) {
    this.#handler = inputs.handler;
    this.#dispatcher = inputs.dispatcher;
    this.#scheduler = inputs.scheduler;
    this.#client = inputs.client;
    this.#records = inputs.records;
    this.#life = inputs.life;
    this.#keyed = inputs.dispatcher.keyed;
    this.#direct = inputs.direct;
    this.#directBatches = inputs.directBatches;
  }

  /**
   * Every record goes through the queue from now on (set at start, with tracing): the
   * dispatcher's start runs each attempt inside its own span (RecordRunner.start).
   */
  queueAll(): void {
    this.#direct = false;
    this.#directBatches = undefined;
  }

  /**
   * Takes a delivered batch: `false` when it was refused (the client delivers it again
   * later): no lane, a lane that is not active, paused or held, a consumer that is not
   * live, or a full tracker.
   */
  deliver(batch: DeliveredBatch<M>): boolean {
    const lane = this.#dispatcher.lane(batch.topic, batch.partition);
    if (lane === undefined || lane.state !== "active" || lane.paused || lane.held || lane.userPaused || !this.#life.live) {
      if (lane && lane.state === "stopped" && !lane.paused) this.#records.pauseStopped(lane);
      return false;
    }
    const tracker = lane.tracker;
    let { messages, offsets } = batch;
    const n = offsets.length;
    // Records below the delivered position were registered already (e.g. a re-fetch): skip them.
    const delivered = tracker.delivered;
    if (delivered !== undefined && n > 0 && offsets[0] < delivered) {
      let i = 0;
      while (i < n && offsets[i] < delivered) i++;
      messages = messages.slice(i);
      offsets = Array.prototype.slice.call(offsets, i) as number[];
      if (offsets.length === 0 && batch.next <= delivered) return true;
    }
    let first: number;
    try {
      first = tracker.register(offsets, batch.next);
    } catch (error) {
      if (error instanceof CapacityError) {
        // Too much retained: refuse (the client delivers it again) and pause until it drains.
        this.#dispatcher.setRetained(lane, tracker.retained);
        if (!lane.paused) {
          this.#dispatcher.markPaused(lane);
          this.#client.pause([lane]);
        }
        return false;
      }
      throw error;
    }
    const count = offsets.length;
    if (count > 0) {
      const claim = lane.claim;
      if (claim !== undefined && claim.end > offsets[0]) {
        this.#enqueueUnclaimed(lane, claim, messages, offsets, first);
      } else {
        if (claim !== undefined) lane.claim = undefined; // delivery passed it
        // Exactly-once handlers need their staged context (RecordRunner.start): no direct start.
        const from = this.#direct
          ? this.#runDirect(lane, messages, offsets, first, count)
          : this.#directBatches !== undefined
          ? this.#directBatches.run(lane, messages, offsets, first, count)
          : 0;
        // The rest waits as one run: a record's Work is made when it is taken.
        if (from < count && lane.state === "active") this.#dispatcher.enqueueRun(lane, messages, offsets, first, from, count);
      }
    }
    this.#dispatcher.pump(); // synchronous handlers may finish the whole batch right here
    this.#dispatcher.setRetained(lane, tracker.retained);
    return true;
  }

  /**
   * Queues a registered batch's records except those an earlier owner's claim says are
   * finished: those are completed at once, without running the handler (counted as skipped).
   */
  #enqueueUnclaimed(
    lane: Lane<M>,
    claim: CompletedSet,
    messages: readonly M[],
    offsets: ArrayLike<number>,
    first: number,
  ): void {
    const works: Work<M, Lane<M>>[] = [];
    const d = this.#dispatcher;
    const keyed = this.#keyed;
    const tracker = lane.tracker;
    let advanced = false;
    for (let i = 0; i < offsets.length; i++) {
      const o = offsets[i];
      if (claim.isFinished(o)) {
        this.#records.skipped++;
        if (tracker.complete(first + i) === Completion.Advanced) advanced = true;
      } else {
        const m = messages[i];
        works.push(new Work(lane, m, o, first + i, keyed ? d.keyHash(m) : -1));
      }
    }
    if (works.length > 0) d.enqueue(lane, works);
    if (advanced) this.#scheduler.notify();
  }

  /**
   * Runs a registered batch's records right here, in offset order, while a record may start
   * without queueing ({@link Dispatcher.canStartDirect}): a handler that returns at once
   * finishes its record before the next one starts (no queue, no key taken, one tracker
   * call for all of them), one that returns a promise or throws leaves its record in flight
   * as {@link RecordRunner.start} would. Completions are applied in one call before anything else can
   * look at the tracker (before a failure is handled, and before returning); no commit can
   * be proposed meanwhile (commits leave from timers and promise callbacks, never from here).
   * @returns the index of the first record not started (the caller queues the rest)
   */
  #runDirect(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    // A delivery from inside a handler called here (a client that delivers synchronously) queues its batch: the scratch is in use.
    if (this.#inDirect) return 0;
    this.#inDirect = true;
    try {
      return this.#runDirectLoop(lane, messages, offsets, first, count);
    } finally {
      this.#inDirect = false;
    }
  }

  #runDirectLoop(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    const d = this.#dispatcher;
    const handler = this.#handler;
    const records = this.#records;
    if (doneScratch.length < count) doneScratch = new Float64Array(Math.max(count, doneScratch.length * 2));
    const done = doneScratch;
    let k = 0; // handles finished and not applied yet: done[0 .. k)
    let i = 0;
    while (i < count && d.canStartDirect(lane)) {
      const m = messages[i];
      const offset = offsets[i];
      const handle = first + i;
      i++;
      d.beginDirect(lane, offset);
      let result: unknown;
      try {
        // A two-field context: a record that finishes in the call needs no Work.
        result = handler(m, new DirectContext<M>(lane, offset));
      } catch (error) {
        k = this.#completeDirect(lane, done, k);
        records.attemptFailed(d.keepDirect(lane, m, offset, handle, this.#keyed ? d.keyHash(m) : -1), error);
        continue;
      }
      const then = thenOf(result);
      if (then !== undefined) {
        records.settlers.watch(d.keepDirect(lane, m, offset, handle, this.#keyed ? d.keyHash(m) : -1), result as PromiseLike<unknown>, then);
      } else {
        d.endDirect(lane);
        done[k++] = handle;
      }
    }
    this.#completeDirect(lane, done, k);
    lane.notifyIdle();
    return i;
  }

  /** Applies `done[0 .. k)`, the handles of directly run records that finished; returns 0 (nothing left to apply). */
  #completeDirect(lane: Lane<M>, done: Float64Array, k: number): number {
    if (k === 0 || lane.abandoned) return 0;
    const n = lane.tracker.completeMany(done.subarray(0, k));
    if (n > 0) {
      this.#records.completed += n;
      this.#scheduler.notify();
    }
    return 0;
  }
}
