/**
 * The batch handler (`batch: { maxRecords, maxWaitMs, handler }`): records the dispatcher
 * starts are gathered into batches and handed to one call, `(messages, context) =>
 * results`. Every guarantee of the record handler holds because a batch is made only of
 * records the dispatcher started, each counted as a running attempt: the ordering
 * (under `key` ordering a key has at most one record in flight, so a key is never in two
 * running batches, and a batch holds at most one record per key; under `partition`
 * ordering one record per partition), the bounds (`concurrency` counts the records in
 * running batches, so a batch holds at most `concurrency` records), retries, dead
 * letters, stops, the completed set. The handler fails the whole batch by throwing (each
 * record's attempt failed), or single records by returning an array with an `Error` at
 * their index; only those retry (with backoff or their `RetryAfterError`), then dead
 * letter or stop; the rest complete.
 *
 * Exactly-once mode (`transactional`): each `records[i]` gains `send`, which stages
 * outputs for record `i` alone, exactly as the record handler's `send` does for its record.
 * Kafka transactions are per partition here (one transactional producer per partition), and
 * a batch may hold records of several partitions, so a batch is not one transaction: an
 * output belongs to the record that sent it and joins, when that record completes, the
 * next transaction of the record's own partition, with that record's offset (and completed
 * set). A record failed by its result drops its staged outputs (it retries, and only it);
 * a throw drops every record's; a dead letter is its record's output, as with the record
 * handler. So a batch whose records span partitions A and B may commit A's part and have
 * B's transaction fail: B's records (only they) run again, in later batches, and each
 * input still has exactly one committed output. What this cannot give is one output made
 * from several records that is atomic with all of them (an aggregate across partitions):
 * stage it through one record and it commits with that record alone.
 *
 * @module
 */
import { describe, InvalidArgumentError } from "../../errors.ts";
import { BatchCall, type BatchContext, BatchRecordContext, BatchSignal } from "./batch_context.ts";
import type { Lane } from "../dispatch/mod.ts";
import type { Work } from "../dispatch/mod.ts";
import { checkOutput, type OutputRecord } from "../port/mod.ts";
import { type RecordTracing, type TraceSpan, tracedOutput } from "../port/mod.ts";

export { type BatchContext } from "./batch_context.ts";

/**
 * Per-record results: `undefined` (or nothing returned) = every record succeeded; else an
 * array as long as the batch, an `Error` at index `i` failing record `i` (anything else
 * there: it succeeded).
 */
export type BatchResult = void | undefined | readonly unknown[];

/** A batch handler. A throw or rejection fails every record of the batch. */
export type BatchHandler<M> = (messages: M[], context: BatchContext) => BatchResult | PromiseLike<BatchResult>;

/** `batch`: how records are gathered and the handler that takes them. */
export interface BatchOptions<M> {
  /** Most records in one batch: an integer ≥ 1 (a batch also holds at most `concurrency`). */
  maxRecords: number;
  /** How long the first record of a batch waits for more before the batch runs. Default 10 ms. */
  maxWaitMs?: number;
  /** The batch handler (the top-level `handler` is then left out). */
  handler: BatchHandler<M>;
}

/** Validated {@link BatchOptions}. */
export type ResolvedBatchOptions<M> = Required<BatchOptions<M>>;

/**
 * Validates `batch`.
 * @throws {InvalidArgumentError} for a bad `maxRecords`, `maxWaitMs` or `handler`
 */
export function resolveBatchOptions<M>(o: BatchOptions<M>): ResolvedBatchOptions<M> {
  if (o === null || typeof o !== "object") throw new InvalidArgumentError(`batch must be { maxRecords, maxWaitMs?, handler }; got ${describe(o)}`);
  const { maxRecords, maxWaitMs = 10, handler } = o;
  if (typeof maxRecords !== "number" || !Number.isSafeInteger(maxRecords) || maxRecords < 1) {
    throw new InvalidArgumentError(`batch.maxRecords must be an integer ≥ 1; got ${describe(maxRecords)}`);
  }
  if (typeof maxWaitMs !== "number" || !Number.isFinite(maxWaitMs) || maxWaitMs < 0) {
    throw new InvalidArgumentError(`batch.maxWaitMs must be a finite number ≥ 0; got ${describe(maxWaitMs)}`);
  }
  if (typeof handler !== "function") throw new InvalidArgumentError(`batch.handler must be a function; got ${describe(handler)}`);
  return { maxRecords, maxWaitMs, handler };
}

/** What a {@link BatchCollector} drives. */
export interface BatchInputs<M> {
  /** A record's attempt succeeded (in exactly-once mode with the outputs it staged). */
  readonly ok: (work: Work<M, Lane<M>>, outputs?: readonly OutputRecord[]) => void;
  /** A record's attempt failed. */
  readonly failed: (work: Work<M, Lane<M>>, error: unknown) => void;
  /** Whether no more record can start now (every worker busy): the batch runs without waiting. */
  readonly full: () => boolean;
  /** Runs `settle` (which ends the attempts of a batch) with starts deferred until it returned. */
  readonly together: (settle: () => void) => void;
  /** Exactly-once mode: each record's context gains `send`, and a record's outputs go with its completion. */
  readonly transactional?: boolean;
}

/**
 * Why a batch handler's result fails the whole batch: `undefined` for nothing or an array
 * of the batch's length, else a typed error naming what came back.
 */
function badBatchResult(result: unknown, size: number): InvalidArgumentError | undefined {
  if (result === undefined || (Array.isArray(result) && result.length === size)) return undefined;
  return new InvalidArgumentError(
    `a batch handler returns nothing or an array of ${size} results (an Error fails its record); got ${describe(result)}`,
  );
}

/** Whether a handler's result is a promise (a thenable) rather than a result. */
export function isThenable(result: unknown): result is PromiseLike<unknown> {
  return result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function";
}

/** A gathered batch's records' contexts, made as the direct start makes its own (the same array kind and class). */
function recordContexts<M>(works: readonly Work<M, Lane<M>>[]): BatchRecordContext<M>[] {
  const n = works.length;
  const records = new Array<BatchRecordContext<M>>(n);
  for (let j = 0; j < n; j++) {
    const w = works[j];
    records[j] = new BatchRecordContext<M>(w.lane, w.offset, w.attempt, w);
  }
  return records;
}

/** Gathers started records into batches and runs the batch handler. */
export class BatchCollector<M> {
  /** Batches run (the direct start's included). */
  batches = 0;
  /** With tracing (set once at start): each call runs in a span of its own, linked to its records. */
  tracing: RecordTracing<M> | undefined = undefined;
  readonly #o: ResolvedBatchOptions<M>;
  readonly #in: BatchInputs<M>;
  #pending: Work<M, Lane<M>>[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * A collector.
   * @param options validated options
   * @param inputs what it drives
   */
  constructor(options: ResolvedBatchOptions<M>, inputs: BatchInputs<M>) {
    this.#o = options;
    this.#in = inputs;
  }

  /** The validated options. */
  get options(): ResolvedBatchOptions<M> {
    return this.#o;
  }

  /** Records gathered into the open batch, waiting for it to run. */
  get waiting(): number {
    return this.#pending.length;
  }

  /** A record's attempt starts: it joins the open batch, which runs when full, when no more can start, or after `maxWaitMs`. */
  add(work: Work<M, Lane<M>>): void {
    this.#pending.push(work);
    if (this.#pending.length >= this.#o.maxRecords || this.#in.full()) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#o.maxWaitMs);
  }

  /** Runs the open batch now. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const works = this.#pending;
    if (works.length === 0) return;
    this.#pending = [];
    this.batches++;
    const batchSignal = new BatchSignal(works as unknown as Work<unknown, Lane<unknown>>[]);
    const span = this.tracing?.batch(works);
    // Exactly-once mode: per record, this attempt's outputs, kept only if the record succeeds.
    const staged: OutputRecord[][] | undefined = this.#in.transactional ? works.map(() => []) : undefined;
    let open = true;
    // A record's context: its attempt's fields (the class the direct start's records have), with `send` in exactly-once mode.
    const records = staged === undefined ? recordContexts(works) : works.map((w, i) => {
      const mine = staged[i];
      const send = (...outputs: OutputRecord[]): void => {
        if (!open) throw new InvalidArgumentError(`send() after the batch handler of ${w.topic}/${w.partition}@${w.offset} settled`);
        for (const r of outputs) mine.push(span === undefined ? checkOutput(r) : tracedOutput(checkOutput(r), span));
      };
      return { topic: w.topic, partition: w.partition, offset: w.offset, attempt: w.attempt, signal: w.signal, send };
    });
    const ended = (): void => {
      open = false;
      batchSignal.release();
    };
    let result: unknown;
    try {
      const messages = works.map((w) => w.message); // packed, as the direct start's slice of the delivery
      const call = new BatchCall<M>(records, batchSignal, undefined, undefined, 0, works.length);
      result = span === undefined ? this.#o.handler(messages, call) : span.run(() => this.#o.handler(messages, call));
    } catch (error) {
      ended();
      if (span !== undefined) endBatchSpan(span, works, error, true);
      this.failAll(works, error);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (r) => (ended(), span && endBatchSpan(span, works, r, false), this.settle(works, r, staged)),
        (error: unknown) => (ended(), span && endBatchSpan(span, works, error, true), this.failAll(works, error)),
      );
    } else {
      ended();
      if (span !== undefined) endBatchSpan(span, works, result, false);
      this.settle(works, result, staged);
    }
  }

  /**
   * Ends the attempts of a batch's records with the handler's `result` (per-record results,
   * or a result of the wrong shape, which fails them all); new records start only after.
   * @param staged exactly-once mode: each record's staged outputs
   */
  settle(works: readonly Work<M, Lane<M>>[], result: unknown, staged?: readonly (readonly OutputRecord[])[]): void {
    const bad = badBatchResult(result, works.length);
    if (bad !== undefined) return this.failAll(works, bad);
    this.#in.together(() => {
      for (let i = 0; i < works.length; i++) {
        const r = (result as unknown[] | undefined)?.[i];
        if (r instanceof Error) this.#in.failed(works[i], r);
        else this.#in.ok(works[i], staged?.[i]);
      }
    });
  }

  /** Fails the attempts of every record of a batch with `error` (the handler threw); new records start only after. */
  failAll(works: readonly Work<M, Lane<M>>[], error: unknown): void {
    this.#in.together(() => {
      for (const w of works) this.#in.failed(w, error);
    });
  }

  /** Drops the wait timer (shutdown); records still gathered run at once. */
  stop(): void {
    this.flush();
  }
}

/**
 * Ends a batch call's span: failed as a whole when the handler threw (`threw`) or returned a
 * result of the wrong shape, else with an event per record its result failed (and error
 * status when any did).
 */
function endBatchSpan<M>(span: TraceSpan, works: readonly Work<M, Lane<M>>[], result: unknown, threw: boolean): void {
  const bad = threw ? undefined : badBatchResult(result, works.length);
  if (threw) span.fail(result);
  else if (bad !== undefined) span.fail(bad);
  else if (result !== undefined) {
    let failed: unknown;
    for (let i = 0; i < works.length; i++) {
      const r = (result as unknown[])[i];
      if (!(r instanceof Error)) continue;
      failed ??= r;
      span.event("offset_frontier.record_failed", {
        "messaging.destination.partition.id": String(works[i].partition),
        "messaging.kafka.offset": works[i].offset,
      });
    }
    if (failed !== undefined) span.fail(failed);
  }
  span.end();
}
