/**
 * Running records: one handler attempt at a time per record, then its completion in the
 * partition's tracker, a retry with backoff, a dead letter (complete only once it is
 * produced, or in exactly-once mode staged as the record's output), or the partition's
 * stop. A failing record is never marked complete to let the frontier move.
 *
 * @module
 */
import type { ConsumerClient } from "../port/mod.ts";
import type { BatchCollector } from "./batch.ts";
import type { CommitScheduler } from "../commits/mod.ts";
import type { Dispatcher, Lane, Work } from "../dispatch/mod.ts";
import type { ExactlyOnce } from "../commits/mod.ts";
import type { EventHub } from "../port/mod.ts";
import { type ResolvedRetryPolicy, backoffDelay, canRetry } from "./retry.ts";
import { retryDelay } from "./retry_after.ts";
import type { StuckRecordError, StuckWatch } from "./stuck.ts";
import { onSettled, Settlers, thenOf } from "./settlers.ts";
import { StagedOutputs } from "./staged_outputs.ts";
import type { Handler, RecordContext } from "./record_context.ts";
import type { OutputRecord } from "../port/mod.ts";
import { type RecordTracing, type TraceSpan, traceHeaders, tracedOutput } from "../port/mod.ts";
import { PartitionStoppedError } from "./partition_stopped.ts";
import { Completion } from "../../tracker/engine.ts";

/** What a {@link RecordRunner} reads and drives. */
export interface RecordInputs<M> {
  /** Runs once per record (again on retries). */
  readonly handler: Handler<M>;
  /** Ordering, concurrency and backpressure. */
  readonly dispatcher: Dispatcher<M>;
  /** Told when the safe position (or the completed set above it) moved. */
  readonly scheduler: CommitScheduler;
  /** Pauses a stopped partition; produces dead letters outside exactly-once mode. */
  readonly client: Pick<ConsumerClient<M>, "pause" | "deadLetter">;
  /** Emits `retry`, `deadLetter`, `pause` and `error`. */
  readonly events: EventHub;
  /** The resolved retry policy. */
  readonly retry: ResolvedRetryPolicy;
  /** Commits carry completed sets: a completion above the safe position is worth a commit. */
  readonly completedSets: boolean;
  /** Exactly-once mode: the handler's context gains `send`; outputs are staged on completion. */
  readonly tx: ExactlyOnce<M> | undefined;
  /** The stuck-record watch (`stuck`), if any: told of every first attempt. */
  readonly stuck?: StuckWatch<M>;
  /** Batch mode: started records go to it instead of the record handler. */
  readonly batch?: BatchCollector<M>;
}

/** Runs handler attempts and settles their records; keeps the record counters. */
export class RecordRunner<M> {
  /** Records completed (handler or dead letter). */
  completed = 0;
  /** Records an earlier owner's claim called finished: completed without running. */
  skipped = 0;
  /** Failed attempts. */
  failures = 0;
  /** Retries scheduled. */
  retries = 0;
  /** Records dead-lettered. */
  deadLettered = 0;
  readonly #handler: Handler<M>;
  readonly #dispatcher: Dispatcher<M>;
  readonly #scheduler: CommitScheduler;
  readonly #client: Pick<ConsumerClient<M>, "pause" | "deadLetter">;
  readonly #events: EventHub;
  readonly #retry: ResolvedRetryPolicy;
  readonly #completedSets: boolean;
  readonly #tx: ExactlyOnce<M> | undefined;
  readonly #stuck: StuckWatch<M> | undefined;
  readonly #batch: BatchCollector<M> | undefined;
  #tracing: RecordTracing<M> | undefined;
  /** Where a handler's promise is watched (settlers.ts). */
  readonly settlers: Settlers<Work<M, Lane<M>>> = new Settlers<Work<M, Lane<M>>>({
    ok: (work) => this.attemptOk(work),
    failed: (work, error) => this.attemptFailed(work, error),
  });

  /**
   * A runner over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: RecordInputs<M>) {
    this.#handler = inputs.handler;
    this.#dispatcher = inputs.dispatcher;
    this.#scheduler = inputs.scheduler;
    this.#client = inputs.client;
    this.#events = inputs.events;
    this.#retry = inputs.retry;
    this.#completedSets = inputs.completedSets;
    this.#tx = inputs.tx;
    this.#stuck = inputs.stuck;
    this.#batch = inputs.batch;
  }

  /**
   * Traces every attempt from now on (set once at start, before any delivery): each runs in a
   * span of its own (and each batch handler call in one linked to its records).
   */
  useTracing(tracing: RecordTracing<M>): void {
    this.#tracing = tracing;
    if (this.#batch) this.#batch.tracing = tracing;
  }

  /**
   * Calls the handler for `work` (the dispatcher's `start`): its settling ends the attempt, as {@link attemptOk} or {@link attemptFailed}.
   * No closure is made here (exactly-once and tracing have methods of their own): a closure
   * over `work` would make every call allocate a context for it, whichever branch runs.
   */
  start(work: Work<M, Lane<M>>): void {
    this.#stuck?.started(work);
    work.running = true;
    if (this.#batch) return this.#batch.add(work); // its batch's result ends the attempt
    if (this.#tracing !== undefined) return this.#startTraced(work, this.#tracing);
    if (this.#tx) return this.#startTransactional(work);
    let result: unknown;
    try {
      result = this.#handler(work.message, work);
    } catch (error) {
      this.attemptFailed(work, error);
      return;
    }
    const then = thenOf(result);
    if (then !== undefined) return this.settlers.watch(work, result as PromiseLike<unknown>, then);
    this.attemptOk(work);
  }

  /** {@link start} in exactly-once mode: the handler's context gains `send`, whose outputs are kept only if the attempt succeeds. */
  #startTransactional(work: Work<M, Lane<M>>): void {
    const stage = new StagedOutputs(work);
    const ok = (): void => this.attemptOk(work, stage.close());
    const failed = (error: unknown): void => (stage.close(), this.attemptFailed(work, error));
    let result: unknown;
    try {
      result = this.#handler(work.message, stage.context);
    } catch (error) {
      failed(error);
      return;
    }
    const then = thenOf(result);
    if (then !== undefined) onSettled(result as PromiseLike<unknown>, then, ok, failed);
    else ok();
  }

  /**
   * {@link start} with tracing: the handler runs inside the attempt's own span (a child of the
   * record's header context, never of whatever context started it), which ends with the
   * attempt; in exactly-once mode each output sent carries the span's context in its headers.
   */
  #startTraced(work: Work<M, Lane<M>>, tracing: RecordTracing<M>): void {
    const span = work.span = tracing.record(work);
    const stage = this.#tx ? new StagedOutputs(work, (output) => tracedOutput(output, span)) : undefined;
    const context: RecordContext = stage?.context ?? work;
    let result: unknown, threw = false, thrown: unknown, then: PromiseLike<unknown>["then"] | undefined;
    span.run(() => {
      try {
        result = this.#handler(work.message, context);
      } catch (error) {
        threw = true;
        thrown = error;
      }
    });
    // Settled outside the span: the runner's own work (the next starts, commits) is no record's.
    // The callbacks are inline, not named constants: a loader that keeps function names (tsx)
    // renames each named closure with Object.defineProperty, per record (bench/consumer_path.ts
    // --tracing noop: 16 % of the CPU on Node).
    if (threw) {
      stage?.close();
      this.attemptFailed(work, thrown);
    } else if ((then = thenOf(result)) !== undefined) {
      onSettled(
        result as PromiseLike<unknown>,
        then,
        () => this.attemptOk(work, stage?.close()),
        (error: unknown) => (stage?.close(), this.attemptFailed(work, error)),
      );
    } else {
      this.attemptOk(work, stage?.close());
    }
  }

  /** An attempt succeeded: the record completes (with its staged `outputs` in exactly-once mode) and the next records start. */
  attemptOk(work: Work<M, Lane<M>>, outputs?: readonly OutputRecord[]): void {
    if (work.givenUp) return; // abandoned as stuck: its worker was freed then, and this completion does not count
    if (work.span !== undefined) endSpan(work);
    work.running = false;
    this.#dispatcher.attemptEnded(work);
    this.#complete(work, outputs);
    this.#dispatcher.pump();
  }

  #complete(work: Work<M, Lane<M>>, outputs?: readonly OutputRecord[]): void {
    const lane = work.lane;
    this.#dispatcher.settle(work);
    if (lane.abandoned) return;
    const r = lane.tracker.complete(work.handle);
    // Same tick as the completion: the next proposal and these outputs go together.
    if (outputs !== undefined && (r === Completion.Advanced || r === Completion.Completed)) {
      this.#tx?.stage.completed(lane, work.offset, outputs);
    }
    if (r === Completion.Advanced) {
      this.completed++;
      this.#scheduler.notify();
      if (this.#dispatcher.wantsRetained(lane) && !lane.ended) {
        this.#dispatcher.setRetained(lane, lane.tracker.retained);
      }
    } else if (r === Completion.Completed) {
      this.completed++;
      if (this.#completedSets) this.#scheduler.notify(); // the completed set above the safe position grew
    }
  }

  /** An attempt failed with `error`: retried with backoff, then dead-lettered or its partition stops (abandoned past a drain's bound). */
  attemptFailed(work: Work<M, Lane<M>>, error: unknown): void {
    if (work.givenUp) return; // abandoned as stuck
    work.running = false;
    this.failures++;
    work.error = error;
    const span = work.span; // with tracing: open until the attempt's outcome is recorded on it
    span?.fail(error);
    const lane = work.lane;
    const left = this.#dispatcher.drainLeft(lane); // Infinity while active; a drain retries within its deadline
    if (left <= 0) {
      span?.event("offset_frontier.abandoned");
      this.#dispatcher.abandon(work); // stays pending: delivered again after the revoke or restart
    } else if (canRetry(this.#retry, work.attempt)) {
      // The handler's own request (RetryAfterError, `retryAfterMs`, `retryAt`) capped by the policy, else the backoff.
      const chosen = retryDelay(this.#retry, work.attempt, error);
      const delayMs = Math.min(chosen.delayMs, Math.floor(left / 2));
      this.retries++;
      if (this.#events.has("retry")) {
        this.#events.emit("retry", {
          topic: lane.topic,
          partition: lane.partition,
          offset: work.offset,
          attempt: work.attempt,
          delayMs,
          requested: chosen.requested,
          error,
        });
      }
      span?.event("offset_frontier.retry", { "offset_frontier.retry.delay_ms": delayMs });
      this.#dispatcher.retryLater(work, delayMs);
    } else if (this.#retry.onExhausted === "dead-letter") {
      this.#deadLetter(work, 1);
    } else {
      this.#stopPartition(work, error);
    }
    if (span !== undefined) endSpan(work);
    // Only now: a drain waiting for the lane to go idle must see the retry or dead letter scheduled.
    this.#dispatcher.attemptEnded(work);
    this.#dispatcher.pump();
  }

  /** A record found stuck (its worker already freed): dead-lettered, or its partition stops. */
  giveUp(work: Work<M, Lane<M>>, error: StuckRecordError, action: "dead-letter" | "stop"): void {
    const span = work.span;
    if (span !== undefined) {
      span.event("offset_frontier.stuck", { "offset_frontier.stuck.action": action });
      span.fail(error);
    }
    if (action === "dead-letter") this.#deadLetter(work, 1);
    else this.#stopPartition(work, error);
    if (span !== undefined) endSpan(work);
    this.#dispatcher.pump();
  }

  /**
   * With tracing, a dead letter's trace: the event on the attempt's span (a span of its own
   * when there is none open: batch mode), whose context the dead letter carries on in its
   * headers and in which its produce is called (a producer's instrumentation nests under it).
   */
  #deadLetterTrace(work: Work<M, Lane<M>>, tracing: RecordTracing<M>): DeadLetterTrace {
    let span: TraceSpan | undefined = work.span;
    const own = span === undefined;
    span ??= tracing.record(work);
    span.event("offset_frontier.dead_letter", { "offset_frontier.dead_letter.attempts": work.attempt });
    const headers = traceHeaders(span);
    if (own) span.end();
    return { span, headers };
  }

  #deadLetter(work: Work<M, Lane<M>>, produceAttempt: number, trace?: DeadLetterTrace): void {
    work.deadLettering = true;
    const lane = work.lane;
    const info = {
      topic: lane.topic,
      partition: lane.partition,
      offset: work.offset,
      error: work.error,
      attempts: work.attempt,
    };
    if (trace === undefined && this.#tracing !== undefined) trace = this.#deadLetterTrace(work, this.#tracing);
    this.#dispatcher.sideStarted(work);
    const txDeadLetter = this.#tx?.port.deadLetter;
    if (txDeadLetter) {
      // Transactional: the dead letter is the record's output, committed with its completion.
      let letter: OutputRecord;
      try {
        letter = txDeadLetter(work.message, trace === undefined ? info : { ...info, headers: trace.headers });
      } catch (error) {
        this.#dispatcher.sideEnded(work);
        this.#stopPartition(work, error);
        return;
      }
      void Promise.resolve().then(() => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.deadLettered++;
        this.#events.emit("deadLetter", info);
        this.#complete(work, [letter]);
        this.#dispatcher.pump();
      });
      return;
    }
    let produced: Promise<void>;
    try {
      const produce = (): Promise<void> => this.#client.deadLetter!(work.message, { ...info, signal: work.signal, ...(trace ? { headers: trace.headers } : {}) });
      produced = Promise.resolve(trace === undefined ? produce() : trace.span.run(produce));
    } catch (error) {
      produced = Promise.reject(error);
    }
    produced.then(
      () => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.deadLettered++;
        this.#events.emit("deadLetter", info);
        this.#complete(work);
        this.#dispatcher.pump();
      },
      (error: unknown) => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.#events.emit("error", { ...info, kind: "dead-letter", error });
        if (this.#dispatcher.drainLeft(lane) <= 0) {
          this.#dispatcher.abandon(work);
        } else if (canRetry(this.#retry, produceAttempt)) {
          this.#dispatcher.wait(work, backoffDelay(this.#retry, produceAttempt), () => {
            if (this.#dispatcher.drainLeft(lane) <= 0) this.#dispatcher.abandon(work);
            else this.#deadLetter(work, produceAttempt + 1, trace);
          });
        } else {
          this.#stopPartition(work, error);
        }
      },
    );
  }

  #stopPartition(work: Work<M, Lane<M>>, error: unknown): void {
    const lane = work.lane;
    work.span?.event("offset_frontier.partition_stopped");
    this.#dispatcher.abandon(work); // the record stays pending: the frontier stays below it
    this.#dispatcher.stopLane(lane, "stopped");
    this.pauseStopped(lane);
    this.#events.emit("error", {
      kind: "partition-stopped",
      error: new PartitionStoppedError(lane.topic, lane.partition, work.offset, error),
      topic: lane.topic,
      partition: lane.partition,
      offset: work.offset,
    });
  }

  /** Pauses a stopped lane at the client and says so (`pause`, reason `stopped`). */
  pauseStopped(lane: Lane<M>): void {
    this.#dispatcher.markPaused(lane);
    this.#client.pause([lane]);
    this.#events.emit("pause", {
      topic: lane.topic,
      partition: lane.partition,
      reason: "stopped",
      retained: lane.retained,
    });
  }

}

/** A dead letter's trace: the span it is recorded on and the headers that carry its context. */
interface DeadLetterTrace {
  readonly span: TraceSpan;
  readonly headers: Record<string, string>;
}

/** Ends the span of `work`'s attempt (tracing only) and forgets it. */
function endSpan<M>(work: Work<M, Lane<M>>): void {
  const span = work.span!;
  work.span = undefined;
  span.end();
}

