/**
 * The stuck-record watch (`stuck: { maxPendingMs, action }`): a record still unfinished
 * `maxPendingMs` after its first attempt started — running, or waiting to run again — is
 * reported (`stuck` event) and, by `action`, abandoned to the dead-letter path
 * (`"dead-letter"`: its running attempt's `signal` is aborted and its worker freed, a late
 * completion is ignored, and it counts as complete once its dead letter is acknowledged),
 * or its partition stops (`"stop"`, as when retries are used up), or nothing more
 * (`"report"`). Each record is acted on once. Without the option nothing watches (records
 * may run as long as they like).
 *
 * Not the commit stall guard (stall.ts, `commit.stallMs` and the `stall` event), which holds
 * every start while commits do not land: this one looks at single records.
 *
 * @module
 */
import type { StuckEvent } from "../port/mod.ts";
export type { StuckEvent };
import type { Dispatcher, Lane, Work } from "../dispatch/mod.ts";
import type { EventHub } from "../port/mod.ts";
import { describe, InvalidArgumentError, OffsetFrontierError } from "../../errors.ts";

/** What happens to a stuck record. */
export type StuckAction = StuckEvent["action"];

/** `stuck`: what counts as a stuck record and what happens to it. */
export interface StuckOptions {
  /** Milliseconds after its first attempt started that an unfinished record is stuck: a finite number > 0. */
  maxPendingMs: number;
  /** `"dead-letter"` (needs a dead-letter producer), `"stop"` (its partition stops) or `"report"` (only the `stuck` event). Default `"report"`. */
  action?: StuckAction;
}

/** Validated {@link StuckOptions}. */
export type ResolvedStuckOptions = Required<StuckOptions>;

/**
 * Validates `stuck`.
 * @param canDeadLetter whether a dead-letter producer exists
 * @throws {InvalidArgumentError} for a bad `maxPendingMs` or `action`, or `"dead-letter"` without a producer
 */
export function resolveStuckOptions(o: StuckOptions, canDeadLetter: boolean): ResolvedStuckOptions {
  if (o === null || typeof o !== "object") throw new InvalidArgumentError(`stuck must be { maxPendingMs, action? }; got ${describe(o)}`);
  const { maxPendingMs, action = "report" } = o;
  if (typeof maxPendingMs !== "number" || !Number.isFinite(maxPendingMs) || maxPendingMs <= 0) {
    throw new InvalidArgumentError(`stuck.maxPendingMs must be a finite number > 0; got ${describe(maxPendingMs)}`);
  }
  if (action !== "dead-letter" && action !== "stop" && action !== "report") {
    throw new InvalidArgumentError(`stuck.action must be "dead-letter", "stop" or "report"; got ${describe(action)}`);
  }
  if (action === "dead-letter" && !canDeadLetter) {
    throw new InvalidArgumentError(`stuck.action is "dead-letter" but no dead-letter producer is configured`);
  }
  return { maxPendingMs, action };
}

/** Why a stuck record was abandoned: the `error` of its dead letter or of its partition's stop. */
export class StuckRecordError extends OffsetFrontierError {
  /** Milliseconds since its first attempt started. */
  readonly pendingMs: number;
  /**
   * The error of a record unfinished past `stuck.maxPendingMs`.
   * @param topic topic
   * @param partition partition
   * @param offset offset
   * @param pendingMs milliseconds since its first attempt started
   */
  constructor(topic: string, partition: number, offset: number, pendingMs: number) {
    super(`the record at ${topic}/${partition}@${offset} was unfinished ${pendingMs} ms after its first attempt started (stuck.maxPendingMs)`);
    this.pendingMs = pendingMs;
  }
}


/** What a {@link StuckWatch} reads and drives. */
export interface StuckInputs<M> {
  /** Frees an abandoned attempt's worker. */
  readonly dispatcher: Pick<Dispatcher<M>, "attemptEnded">;
  /** Dead-letters or stops an abandoned record. */
  readonly giveUp: (work: Work<M, Lane<M>>, error: StuckRecordError, action: "dead-letter" | "stop") => void;
  /** Emits `stuck`. */
  readonly events: EventHub;
}

/** Watches records in flight for `stuck.maxPendingMs`. */
export class StuckWatch<M> {
  /** Records found stuck. */
  count = 0;
  /** The validated options. */
  readonly options: ResolvedStuckOptions;
  readonly #in: StuckInputs<M>;
  readonly #tracked = new Set<Work<M, Lane<M>>>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * A watch, not started.
   * @param options validated options
   * @param inputs what it reads and drives
   */
  constructor(options: ResolvedStuckOptions, inputs: StuckInputs<M>) {
    this.options = options;
    this.#in = inputs;
  }

  /** Starts the periodic check. */
  start(): void {
    this.#timer = setInterval(() => this.check(), Math.max(10, Math.min(1_000, this.options.maxPendingMs / 4)));
  }

  /** Ends the periodic check. */
  stop(): void {
    clearInterval(this.#timer);
    this.#tracked.clear();
  }

  /** A record's attempt starts: its own signal (aborted with its lane's) on the first one, and it is watched from then on. */
  started(work: Work<M, Lane<M>>): void {
    if (work.startedAt !== 0) return;
    work.startedAt = Date.now();
    const controller = work.controller = new AbortController();
    const lane = work.lane.controller.signal;
    if (lane.aborted) controller.abort(lane.reason);
    this.#tracked.add(work);
  }

  /** A lane was added: when it ends, the signals of its watched records abort with it. */
  added(lane: Lane<M>): void {
    const signal = lane.controller.signal;
    signal.addEventListener("abort", () => {
      for (const w of this.#tracked) if (w.lane === lane) w.controller?.abort(signal.reason);
    }, { once: true });
  }

  /** Acts on every record in flight past the limit (each once). */
  check(now: number = Date.now()): void {
    const { maxPendingMs, action } = this.options;
    for (const w of this.#tracked) {
      if (w.finished || w.lane.ended) {
        this.#tracked.delete(w);
        continue;
      }
      const pendingMs = now - w.startedAt;
      // A draining lane has its own bound; a record already in its dead-letter produce is on its way.
      if (pendingMs <= maxPendingMs || w.lane.state !== "active" || w.deadLettering) continue;
      const waiting = w.lane.waiting.has(w);
      if (action !== "report" && !w.running && !waiting) continue; // between attempts (queued to retry): next check
      this.#tracked.delete(w);
      this.count++;
      const lane = w.lane;
      if (this.#in.events.has("stuck")) {
        this.#in.events.emit("stuck", { topic: lane.topic, partition: lane.partition, offset: w.offset, pendingMs, attempt: w.attempt, action });
      }
      if (action === "report") continue;
      const error = new StuckRecordError(lane.topic, lane.partition, w.offset, pendingMs);
      if (w.running) {
        // Abandoned: its worker is freed now and whatever it returns later is ignored.
        w.givenUp = true;
        w.running = false;
        this.#in.dispatcher.attemptEnded(w);
        w.controller?.abort(error);
      } else {
        clearTimeout(w.timer);
        w.timer = undefined;
        w.then = undefined;
        lane.waiting.delete(w);
      }
      w.error = error;
      this.#in.giveUp(w, error, action);
    }
  }
}
