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
  /** Retry timer while waiting to run again. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The last error the handler threw. */
  error: unknown;
  /** While waiting: when the timer fires (`Date.now()` ms) and what it then does. */
  due = 0;
  /** @internal the waiting record's continuation */
  then: (() => void) | undefined;
  /** `stuck` watch only: when its first attempt started (`Date.now()` ms; 0: not yet). */
  startedAt = 0;
  /** `stuck` watch only: its own signal's controller (aborted with its lane's, or when it is abandoned as stuck). */
  controller: AbortController | undefined;
  /** An attempt's handler call is running. */
  running = false;
  /** Abandoned as stuck: its worker was freed and whatever its attempt returns is ignored. */
  givenUp = false;
  /** Its dead-letter produce began. */
  deadLettering = false;
  /** Settled (completed, dead-lettered) or abandoned: it holds no slot any more. */
  finished = false;
  /** @internal `key` ordering: its key, once read (only when its key's hash equals a held key's). */
  key: string | undefined = undefined;
  /** @internal `key` ordering: the next record of its key, set aside behind it (its key's chain). */
  behind: Work<M, L> | undefined = undefined;
  /** @internal `key` ordering, on the record holding its key: the last record of its chain. */
  last: Work<M, L> | undefined = undefined;
  /** With tracing: the span of its running attempt (record_runner.ts ends it). Declared only: no field is made without tracing. */
  declare span: TraceSpan | undefined;

  /**
   * A record's work item, made when its batch is delivered.
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
    return this.controller?.signal ?? this.lane.controller.signal;
  }
}
