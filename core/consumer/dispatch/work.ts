/**
 * A delivered record on its way through the consumer (also the handler's context).
 *
 * @module
 */
import type { Handle } from "../../tracker/tracker.ts";
import type { TraceSpan } from "../port/mod.ts";

/** What a record reads of its partition's lane (the dispatcher's `Lane` is one). */
export interface RecordLane {
  /** Topic of the partition. */
  readonly topic: string;
  /** The partition. */
  readonly partition: number;
  /** Aborted when the lane's work is abandoned. */
  readonly controller: AbortController;
}

/**
 * One delivered record on its way through the consumer; also the handler's context. `L`:
 * its lane's type (the dispatcher's `Lane<M>`; the lane queues its records, so this file
 * does not import it).
 */
export class Work<M, L extends RecordLane = RecordLane> {
  /** How many times the handler was called for it (1 during the first call). */
  attempt = 0;
  /** An attempt's handler call is running. */
  running = false;
  /** Settled (completed, dead-lettered) or abandoned: it holds no slot any more. */
  finished = false;
  // What few records need (a retry's wait, the stuck watch, a dead letter, an error): made on
  // the first write of a value, so that a record that runs once and succeeds carries none of it.
  #rare: RareFields | undefined = undefined;
  /** @internal `key` ordering: its key, once read (only when its key's hash equals a held key's). */
  key: string | undefined = undefined;
  /** @internal `key` ordering: the next record of its key, set aside behind it (its key's chain). */
  behind: Work<M, L> | undefined = undefined;
  /** @internal `key` ordering, on the record holding its key: the last record of its chain. */
  last: Work<M, L> | undefined = undefined;
  /** With tracing: the span of its running attempt (record_runner.ts ends it). Declared only: no field is made without tracing. */
  declare span: TraceSpan | undefined;

  /**
   * A record's work item, made when the dispatcher takes it (or when a record started directly is still in flight after its call).
   * @param lane the partition lane it belongs to
   * @param message the client's record
   * @param offset its offset
   * @param handle its tracker handle
   * @param keyHash `key` ordering: its key's hash (`Dispatcher.keyHash`), an integer in
   *   [0, 2^30); -1: no key, or another ordering
   */
  constructor(
    readonly lane: L,
    readonly message: M,
    readonly offset: number,
    readonly handle: Handle,
    readonly keyHash: number,
  ) {}

  #more(): RareFields {
    return this.#rare ??= new RareFields();
  }

  /** Retry timer while waiting to run again. */
  get timer(): ReturnType<typeof setTimeout> | undefined {
    return this.#rare?.timer;
  }
  set timer(v: ReturnType<typeof setTimeout> | undefined) {
    if (v !== undefined || this.#rare !== undefined) this.#more().timer = v;
  }

  /** The last error the handler threw. */
  get error(): unknown {
    return this.#rare?.error;
  }
  set error(v: unknown) {
    if (v !== undefined || this.#rare !== undefined) this.#more().error = v;
  }

  /** While waiting: when the timer fires (`Date.now()` ms). */
  get due(): number {
    return this.#rare?.due ?? 0;
  }
  set due(v: number) {
    if (v !== 0 || this.#rare !== undefined) this.#more().due = v;
  }

  /** @internal the waiting record's continuation */
  get then(): (() => void) | undefined {
    return this.#rare?.then;
  }
  set then(v: (() => void) | undefined) {
    if (v !== undefined || this.#rare !== undefined) this.#more().then = v;
  }

  /** `stuck` watch only: when its first attempt started (`Date.now()` ms; 0: not yet). */
  get startedAt(): number {
    return this.#rare?.startedAt ?? 0;
  }
  set startedAt(v: number) {
    if (v !== 0 || this.#rare !== undefined) this.#more().startedAt = v;
  }

  /** `stuck` watch only: its own signal's controller (aborted with its lane's, or when it is abandoned as stuck). */
  get controller(): AbortController | undefined {
    return this.#rare?.controller;
  }
  set controller(v: AbortController | undefined) {
    if (v !== undefined || this.#rare !== undefined) this.#more().controller = v;
  }

  /** Abandoned as stuck: its worker was freed and whatever its attempt returns is ignored. */
  get givenUp(): boolean {
    return this.#rare?.givenUp ?? false;
  }
  set givenUp(v: boolean) {
    if (v || this.#rare !== undefined) this.#more().givenUp = v;
  }

  /** Its dead-letter produce began. */
  get deadLettering(): boolean {
    return this.#rare?.deadLettering ?? false;
  }
  set deadLettering(v: boolean) {
    if (v || this.#rare !== undefined) this.#more().deadLettering = v;
  }

  /** Topic of the record. */
  get topic(): string {
    return this.lane.topic;
  }

  /** Partition of the record. */
  get partition(): number {
    return this.lane.partition;
  }

  /** Aborted when the record's work is abandoned: partition revoked or lost, the shutdown grace expired, or (with `stuck`) it was found stuck. */
  get signal(): AbortSignal {
    return this.#rare?.controller?.signal ?? this.lane.controller.signal;
  }
}

/** The fields of a {@link Work} that few records need (see `Work.timer` and the others). */
class RareFields {
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  error: unknown = undefined;
  due = 0;
  then: (() => void) | undefined = undefined;
  startedAt = 0;
  controller: AbortController | undefined = undefined;
  givenUp = false;
  deadLettering = false;
}
