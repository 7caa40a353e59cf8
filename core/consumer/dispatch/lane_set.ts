/**
 * The dispatcher's lanes: a lane per assigned partition, found by topic and partition, in
 * the order the dispatcher goes round them; adding one, stopping one (a drain, or a record
 * failed for good: lane_drain.ts), removing one; their retained entries and backpressure
 * (backpressure.ts); and where records' keys are read (record_keys.ts). The dispatcher
 * (dispatcher.ts) chooses and starts records over them.
 *
 * @module
 */
import type { Tracker } from "../../tracker/tracker.ts";
import { type DispatchOptions, resolveDispatchOptions, type ResolvedDispatchOptions } from "./dispatch_options.ts";
import { Backpressure } from "./backpressure.ts";
import type { DispatchHooks } from "./dispatch_hooks.ts";
import { Lane } from "./lane.ts";
import { stopLane } from "./lane_drain.ts";
import { RecordKeys } from "./record_keys.ts";
import type { Work } from "./work.ts";

/** The lanes of the current assignment (see the module doc); the `Dispatcher` is one. */
export class LaneSet<M> {
  /** The validated options. */
  readonly options: ResolvedDispatchOptions;
  /** What the dispatcher calls back. */
  protected readonly hooks: DispatchHooks<M>;
  readonly #lanes = new Map<string, Map<number, Lane<M>>>();
  /** The lanes in the order they are gone round. */
  protected order: Lane<M>[] = [];
  /** Where the next round starts in {@link order}. */
  protected cursor = 0;
  /** Pauses and resumes lanes by their retained entries. */
  protected readonly backpressure: Backpressure<M>;
  /** Records' keys (`key` ordering). */
  protected readonly keys: RecordKeys<M>;

  /**
   * No lanes yet.
   * @param options ordering, concurrency and bounds
   * @param hooks how to pause or resume a partition, and where keys are read
   * @throws {InvalidArgumentError} for bad options
   */
  constructor(options: DispatchOptions, hooks: DispatchHooks<M>) {
    this.options = resolveDispatchOptions(options);
    this.hooks = hooks;
    this.keys = new RecordKeys<M>(this.options.ordering === "key" ? hooks.keys : undefined);
    this.backpressure = new Backpressure<M>(this.options, () => this.order, hooks);
  }

  /**
   * A record's key hash for its {@link Work} (`keyHash`): an integer in [0, 2^30), equal for
   * equal keys; -1 for a record without a key, and for every record unless the ordering is
   * `key` and {@link DispatchHooks.keys} is given.
   */
  keyHash(message: M): number {
    return this.keys.keyHash(message);
  }

  /** Whether records have keys ({@link keyHash} is worth calling): `key` ordering with {@link DispatchHooks.keys}. */
  get keyed(): boolean {
    return this.keys.keyed;
  }

  /** Retained entries over all lanes (as last read). */
  get retained(): number {
    return this.backpressure.retained;
  }

  /** Every lane of the current assignment. */
  lanes(): readonly Lane<M>[] {
    return this.order;
  }

  /** The lane of a partition, if assigned. */
  lane(topic: string, partition: number): Lane<M> | undefined {
    return this.#lanes.get(topic)?.get(partition);
  }

  /** Adds a lane for a newly assigned partition. */
  addLane(topic: string, partition: number, tracker: Tracker): Lane<M> {
    let byPartition = this.#lanes.get(topic);
    if (!byPartition) this.#lanes.set(topic, byPartition = new Map());
    const old = byPartition.get(partition);
    if (old) this.removeLane(old);
    const lane = new Lane<M>(topic, partition, tracker, this.keys.same);
    this.hooks.recordSignal?.(lane.controller.signal);
    byPartition.set(partition, lane);
    this.order.push(lane);
    this.hooks.added?.(lane);
    return lane;
  }

  /**
   * Ends a lane: drops its queued records and retry timers, aborts its signal. Records
   * already running finish on their own (their completions are then rejected by the
   * revoked tracker). Returns the dropped records.
   */
  removeLane(lane: Lane<M>): Work<M, Lane<M>>[] {
    if (lane.ended) return [];
    lane.ended = true; // first: stopLane then drops its retries too
    const dropped = this.stopLane(lane, "draining");
    this.#lanes.get(lane.topic)?.delete(lane.partition);
    if (this.#lanes.get(lane.topic)?.size === 0) this.#lanes.delete(lane.topic);
    const i = this.order.indexOf(lane);
    if (i >= 0) this.order.splice(i, 1);
    if (this.cursor >= this.order.length) this.cursor = 0;
    this.backpressure.removed(lane);
    lane.controller.abort(new Error(`partition ${lane.topic}/${lane.partition} is no longer assigned`));
    this.backpressure.checkTotal();
    return dropped;
  }

  /**
   * Stops dispatching a lane: `draining` (a revoke or a shutdown, until `until`) keeps what
   * is below the highest offset started and the retries that fit the deadline; `stopped`
   * drops everything queued (lane_drain.ts). Returns the dropped records.
   */
  stopLane(lane: Lane<M>, state: "draining" | "stopped", until = 0, keepBelowStarted = true): Work<M, Lane<M>>[] {
    return stopLane(lane, state, until, keepBelowStarted, this.options.ordering);
  }

  /**
   * Records the lane's retained entries (read from its tracker) and pauses or resumes
   * it (see backpressure.ts).
   */
  setRetained(lane: Lane<M>, retained: number): void {
    this.backpressure.setRetained(lane, retained);
  }

  /** Whether the lane's retained count should be re-read after a completion that advanced. */
  wantsRetained(lane: Lane<M>): boolean {
    return this.backpressure.wantsRetained(lane);
  }

  /** Pauses a lane outside backpressure (stopped partitions); it is not resumed by the marks. */
  markPaused(lane: Lane<M>): void {
    this.backpressure.markPaused(lane);
  }
}
