/**
 * The dispatcher: which delivered record runs next. Over its lanes (lane_set.ts: a lane per
 * assigned partition, their backpressure) it honours the ordering mode, the worker-pool size (`concurrency`) and the
 * per-partition in-flight bound, and applies backpressure (backpressure.ts): a partition whose retained
 * entries reach its high mark (or any partition while the total reaches
 * `maxBuffered`) is paused, and resumed once it is at or below the low mark (and the
 * total at or below half of `maxBuffered`).
 *
 * It runs nothing itself and does no I/O: the runner asks it for the next record,
 * tells it when an attempt ended and when a record settled.
 *
 * @module
 */
import type { Handle } from "../../tracker/tracker.ts";
import type { DispatchOptions } from "./dispatch_options.ts";
import type { DispatchHooks } from "./dispatch_hooks.ts";
import type { Lane } from "./lane.ts";
import { handOn, takeReady } from "./key_chains.ts";
import { abandonWork, drainLeft, waitWithin } from "./lane_drain.ts";
import { LaneSet } from "./lane_set.ts";
import { RecordRun } from "./ready_queue.ts";
import { Work } from "./work.ts";

export type { DispatchHooks } from "./dispatch_hooks.ts";
export { type DispatchOptions, type Ordering, resolveDispatchOptions, type ResolvedDispatchOptions } from "./dispatch_options.ts";
export { Fifo } from "./fifo.ts";
export { Lane } from "./lane.ts";
export { LaneSet } from "./lane_set.ts";
export { ReadyQueue, RecordRun } from "./ready_queue.ts";
export { Work } from "./work.ts";

/**
 * Chooses the next record to run, round-robin over partitions.
 *
 * @example
 * ```ts
 * import { Dispatcher, Work } from "./dispatcher.ts";
 * import { Tracker } from "offset-frontier";
 * const d = new Dispatcher<string>({ ordering: "partition", concurrency: 4 }, {
 *   start: (w) => { d.attemptEnded(w); d.settle(w); w.lane.tracker.complete(w.handle); },
 *   pause: () => {}, resume: () => {},
 * });
 * const lane = d.addLane("t", 0, new Tracker({ engine: "js" }));
 * const h = lane.tracker.register([0, 1], 2);
 * d.enqueue(lane, [new Work(lane, "a", 0, h, -1), new Work(lane, "b", 1, h + 1, -1)]);
 * d.pump();
 * ```
 */
export class Dispatcher<M> extends LaneSet<M> {
  #running = 0;
  #pumping = false;
  #halted = false;
  readonly #byKey: boolean;

  /**
   * A dispatcher with no lanes yet.
   * @param options ordering, concurrency and bounds
   * @param hooks how to start an attempt and to pause or resume a partition
   * @throws {InvalidArgumentError} for bad options
   */
  constructor(options: DispatchOptions, hooks: DispatchHooks<M>) {
    super(options, hooks);
    this.#byKey = this.options.ordering === "key";
  }

  /** Handler calls running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Queues a batch's records (already registered in the lane's tracker), in delivery order.
   * Under `key` ordering their keys are looked at only when the dispatcher reaches them.
   */
  enqueue(lane: Lane<M>, works: readonly Work<M, Lane<M>>[]): void {
    lane.ready.pushAll(works);
  }

  /**
   * Queues the records `[from, end)` of a batch (already registered in the lane's tracker,
   * `first` the handle of `messages[0]`), in delivery order, as one run: each record's
   * {@link Work} is made only when it is taken (under `key` ordering their key hashes are read
   * now, in one pass: see {@link RecordRun}).
   */
  enqueueRun(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, from: number, end: number): void {
    lane.ready.pushRun(new RecordRun<M, Lane<M>>(lane, messages, offsets, first, from, end, this.keys.hashOf));
  }

  /** Starts records while workers are free and some partition has a runnable record. */
  pump(): void {
    if (this.#pumping || this.#halted || this.held) return; // a completion inside start() re-enters: the outer loop continues
    this.#pumping = true;
    try {
      const max = this.options.concurrency;
      const gate = this.hooks.gate;
      while (this.#running < max) {
        if (gate !== undefined && !gate.ready()) break; // it pumps again once a token is due
        const w = this.#next();
        if (w === undefined) break;
        gate?.took();
        this.hooks.start(w);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * Runs `settle` (which may end many attempts) with starts deferred, then pumps once: a
   * batch's records all settle before new ones start, so the freed workers fill the next
   * batch instead of each completion starting (and flushing) a batch of one. Inside a pump
   * it just runs `settle`: the pump's loop goes on afterwards.
   */
  together(settle: () => void): void {
    if (this.#pumping) return settle();
    this.#pumping = true;
    try {
      settle();
    } finally {
      this.#pumping = false;
    }
    this.pump();
  }

  /**
   * While set, no record starts (running ones finish): the runner holds dispatching while
   * commits cannot land, so that what a crash would redo stays bounded. Pump after clearing.
   */
  held = false;

  /**
   * Whether a record of `lane` may start right now without going through the queues: the
   * lane is active and has nothing queued (no record of it waits, no key of it is held), a
   * worker and an in-flight slot of the lane are free, and nothing holds dispatching. After
   * every {@link pump} either every worker is busy or no lane has a runnable record, so
   * starting one of `lane`'s records directly then passes over no other lane's.
   */
  canStartDirect(lane: Lane<M>): boolean {
    return lane.state === "active" && !lane.userPaused && this.#running < this.options.concurrency &&
      lane.inFlight < this.options.maxInFlightPerPartition && lane.ready.length === 0 && lane.retry.length === 0 &&
      lane.keys.size === 0 && !this.held && !this.#halted && !this.#pumping && (this.hooks.gate?.ready() ?? true);
  }

  /**
   * Whether `n` records of `lane` may start right now as one batch without going through
   * the queues ({@link canStartDirect} for `n` records at once): workers and in-flight slots
   * for all of them, and no rate limit (whose tokens are taken one start at a time).
   */
  canStartDirectBatch(lane: Lane<M>, n: number): boolean {
    return this.hooks.gate === undefined && lane.state === "active" && !lane.userPaused &&
      this.#running + n <= this.options.concurrency && lane.inFlight + n <= this.options.maxInFlightPerPartition &&
      lane.ready.length === 0 && lane.retry.length === 0 && lane.keys.size === 0 && !this.held && !this.#halted && !this.#pumping;
  }

  /**
   * Counts a record of `lane` at `offset` as started (running, in flight) without queueing
   * it; only after {@link canStartDirect} said yes, with records of the lane started in
   * offset order. Its handler call then ends with {@link endDirect} (it finished before the
   * call returned) or, if it is still in flight, {@link keepDirect} and the usual
   * {@link attemptEnded} and {@link settle}.
   */
  beginDirect(lane: Lane<M>, offset: number): void {
    this.hooks.gate?.took();
    lane.inFlight++;
    if (offset > lane.maxStarted) lane.maxStarted = offset;
    lane.active++;
    this.#running++;
  }

  /** A directly started record whose handler returned at once and succeeded: frees its worker and slot (the runner completes it). */
  endDirect(lane: Lane<M>): void {
    this.#running--;
    lane.active--;
    lane.inFlight--;
  }

  /**
   * {@link beginDirect} for `n` records of `lane` at once (a batch started directly, after
   * {@link canStartDirectBatch}: no rate limit), the highest of their offsets `maxOffset`.
   */
  beginDirectMany(lane: Lane<M>, n: number, maxOffset: number): void {
    lane.inFlight += n;
    if (maxOffset > lane.maxStarted) lane.maxStarted = maxOffset;
    lane.active += n;
    this.#running += n;
  }

  /** {@link endDirect} for `n` records of `lane` at once. */
  endDirectMany(lane: Lane<M>, n: number): void {
    this.#running -= n;
    lane.active -= n;
    lane.inFlight -= n;
  }

  /**
   * A directly started record is still in flight after its handler call returned (a promise,
   * or a failed attempt to retry): its {@link Work} (its first attempt counted), which under
   * `key` ordering takes its key (`keyHash`, from {@link keyHash}), so that later records of
   * that key wait behind it, as if it had come through {@link enqueue}.
   */
  keepDirect(lane: Lane<M>, message: M, offset: number, handle: Handle, keyHash: number): Work<M, Lane<M>> {
    const work = new Work<M, Lane<M>>(lane, message, offset, handle, keyHash);
    work.attempt = 1;
    if (keyHash >= 0) lane.keys.add(work);
    return work;
  }

  /** Stops starting records (shutdown). */
  halt(): void {
    this.#halted = true;
    this.hooks.gate?.stop();
  }

  // Once a record: no division (`%` is an integer divide, tens of cycles), no string comparison.
  #next(): Work<M, Lane<M>> | undefined {
    const order = this.order;
    const n = order.length;
    const perLane = this.options.maxInFlightPerPartition;
    const byKey = this.#byKey;
    let idx = this.cursor < n ? this.cursor : 0;
    for (let i = 0; i < n; i++, idx = idx + 1 === n ? 0 : idx + 1) {
      const lane = order[idx];
      if (lane.state === "stopped" || lane.userPaused) continue; // draining lanes still run what their drain kept
      let w = lane.retry.shift();
      if (w === undefined) {
        if (lane.inFlight >= perLane) continue;
        w = byKey ? lane.unblocked.shift() ?? takeReady(lane) : lane.ready.shift();
        if (w === undefined) continue;
        lane.inFlight++;
        if (w.offset > lane.maxStarted) lane.maxStarted = w.offset;
      }
      this.cursor = idx + 1 === n ? 0 : idx + 1;
      w.attempt++;
      lane.active++;
      this.#running++;
      return w;
    }
    return undefined;
  }

  /** An attempt's handler call returned (either way): frees its worker. */
  attemptEnded(work: Work<M, Lane<M>>): void {
    this.#running--;
    this.#inactive(work.lane);
  }

  /** A dead-letter produce (or other side work) for `work` begins: a drain waits for it. */
  sideStarted(work: Work<M, Lane<M>>): void {
    work.lane.active++;
  }

  /** The side work of `work` ended. */
  sideEnded(work: Work<M, Lane<M>>): void {
    this.#inactive(work.lane);
  }

  #inactive(lane: Lane<M>): void {
    if (--lane.active === 0) lane.notifyIdle();
  }

  /**
   * The record was not completed and will not run again here (failed while its lane
   * drains, or its lane stopped): frees its slot and, under `key` ordering, drops the
   * records of its key queued behind it — they must not overtake it. They all stay
   * pending. Returns the dropped records.
   */
  abandon(work: Work<M, Lane<M>>): Work<M, Lane<M>>[] {
    const dropped = abandonWork(work, this.options.ordering);
    work.lane.notifyIdle();
    return dropped;
  }

  /** Runs `work` again after `delayMs` (it keeps its in-flight slot and its key). */
  retryLater(work: Work<M, Lane<M>>, delayMs: number): void {
    this.wait(work, delayMs, () => {
      work.lane.retry.push(work);
      this.pump();
    });
  }

  /**
   * Calls `then` after `delayMs` while `work` keeps its in-flight slot and its key.
   * When the lane stops dispatching first, the timer is cancelled and the slot freed.
   */
  wait(work: Work<M, Lane<M>>, delayMs: number, then: () => void): void {
    if (!waitWithin(work, delayMs, then)) this.abandon(work);
  }

  /**
   * Milliseconds left of a draining lane's deadline (≤ 0: none left, or the lane is
   * stopped or ended); `Infinity` for an active lane.
   */
  drainLeft(lane: Lane<M>): number {
    return drainLeft(lane);
  }

  /**
   * The record is done (completed or dead-lettered): frees its in-flight slot and its key,
   * which passes to the next record of the key set aside behind it. That record starts right
   * here when it may (a worker and a slot free, nothing holding the lane or the dispatcher,
   * no retry or other handed-on record of the lane waiting, not inside a pump or
   * {@link together}); else it waits in the lane's `unblocked`, ahead of `ready`.
   */
  settle(work: Work<M, Lane<M>>): void {
    const lane = work.lane;
    lane.inFlight--;
    work.finished = true;
    if (work.keyHash >= 0) {
      const next = handOn(lane, work);
      if (next !== undefined) {
        if (this.#mayStartNow(lane)) this.#startNow(lane, next);
        else lane.unblocked.push(next);
      }
    }
    lane.notifyIdle();
  }

  /** Whether a record of `lane` handed its key on settling may start at once (see {@link settle}). */
  #mayStartNow(lane: Lane<M>): boolean {
    return !this.#pumping && !this.held && !this.#halted && this.#running < this.options.concurrency &&
      lane.inFlight < this.options.maxInFlightPerPartition && lane.state !== "stopped" && !lane.userPaused &&
      lane.retry.length === 0 && lane.unblocked.length === 0 && (this.hooks.gate?.ready() ?? true);
  }

  /** Starts `w` of `lane` now, as {@link pump} would (a completion inside its start pumps no deeper: the caller's pump follows). */
  #startNow(lane: Lane<M>, w: Work<M, Lane<M>>): void {
    this.hooks.gate?.took();
    lane.inFlight++;
    if (w.offset > lane.maxStarted) lane.maxStarted = w.offset;
    w.attempt++;
    lane.active++;
    this.#running++;
    this.#pumping = true;
    try {
      this.hooks.start(w);
    } finally {
      this.#pumping = false;
    }
  }
}
