/**
 * What a batch handler's call gets besides its messages: one {@link BatchCall} per call and,
 * when the handler reads `records`, one {@link BatchRecordContext} per record. The direct
 * start (direct_batch.ts) and gathered batches (batch.ts) make these same two classes, so a
 * handler's reads of its context and of each record's stay monomorphic (one shape each),
 * whichever path a batch took: a handler that saw both a direct batch's records and a
 * gathered batch's `Work`s paid for the mix on every record it touched afterwards.
 *
 * A direct start's records' contexts are made when the handler first reads `records` (a
 * handler that reads only its messages makes none), from the delivery's offsets, which the
 * port never changes after delivery (`DeliveredBatch.offsets`); a gathered batch's when it
 * starts, from its records' `Work`s (their attempt then).
 *
 * @module
 */
import type { Lane } from "../dispatch/mod.ts";
import type { RecordContext } from "./record_context.ts";
import type { Work } from "../dispatch/mod.ts";

/** What a batch handler gets besides the messages. */
export interface BatchContext {
  /**
   * Each message's context (topic, partition, offset, attempt, signal), at the same index;
   * in exactly-once mode also `send`, staging outputs for that record alone.
   */
  readonly records: readonly RecordContext[];
  /** Aborted when any record's `signal` is (its partition revoked or lost, the shutdown grace over, or it was found stuck). */
  readonly signal: AbortSignal;
}

/** A record's context in a batch call (see the module doc). Its fields are this attempt's; they never change. */
export class BatchRecordContext<M> implements RecordContext {
  /**
   * @param lane the record's partition lane
   * @param offset its offset
   * @param attempt this attempt's number (1: the first)
   * @param work its `Work` (a gathered record: its signal is its own), or `undefined` (a direct start: its lane's)
   */
  constructor(readonly lane: Lane<M>, readonly offset: number, readonly attempt: number, readonly work: Work<M, Lane<M>> | undefined) {}

  /** Topic of the record. */
  get topic(): string {
    return this.lane.topic;
  }

  /** Partition of the record. */
  get partition(): number {
    return this.lane.partition;
  }

  /** Aborted when the record's work is abandoned: partition revoked or lost, the shutdown grace expired, or it was found stuck. */
  get signal(): AbortSignal {
    return this.work === undefined ? this.lane.controller.signal : this.work.signal;
  }
}

/**
 * A batch's `signal` when its records may not share one, made only when the handler reads
 * it: its records' own signal when they share one (the usual case: one partition's records
 * share its lane's signal), else one that aborts when any of theirs does (one listener per
 * distinct signal, removed when the batch settles).
 */
export class BatchSignal {
  readonly #works: readonly Work<unknown, Lane<unknown>>[];
  #signal: AbortSignal | undefined;
  #unlink: Array<() => void> | undefined;
  #settled = false;

  /** @param works the batch's records */
  constructor(works: readonly Work<unknown, Lane<unknown>>[]) {
    this.#works = works;
  }

  /** The batch's signal. */
  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    const distinct: AbortSignal[] = [];
    for (const w of this.#works) {
      const s = w.signal;
      if (!distinct.includes(s)) distinct.push(s);
    }
    if (distinct.length === 1) return this.#signal = distinct[0];
    const controller = new AbortController();
    this.#signal = controller.signal;
    const aborted = distinct.find((s) => s.aborted);
    if (aborted) controller.abort(aborted.reason);
    else if (!this.#settled) { // after the batch settled, nothing it ran can be abandoned any more
      this.#unlink = distinct.map((s) => {
        const f = (): void => controller.abort(s.reason);
        s.addEventListener("abort", f, { once: true });
        return () => s.removeEventListener("abort", f);
      });
    }
    return this.#signal;
  }

  /** The batch settled: its listeners go. */
  release(): void {
    this.#settled = true;
    if (this.#unlink) for (const u of this.#unlink) u();
    this.#unlink = undefined;
  }
}

/**
 * One batch call's {@link BatchContext}: its records' contexts given (a gathered batch), or
 * made on first read from a delivery's `offsets[from .. from + n)` of `lane` (a direct
 * start: first attempts, their lane's signal).
 */
export class BatchCall<M> implements BatchContext {
  #records: readonly RecordContext[] | undefined;

  /**
   * @param records the records' contexts, or `undefined` (a direct start: made on first read)
   * @param batchSignal a gathered batch's signal, or `undefined` (a direct start: its lane's)
   * @param lane a direct start's lane
   * @param offsets a direct start's delivery offsets
   * @param from its first record there
   * @param n its number of records
   */
  constructor(
    records: readonly RecordContext[] | undefined,
    readonly batchSignal: BatchSignal | undefined,
    readonly lane: Lane<M> | undefined,
    readonly offsets: ArrayLike<number> | undefined,
    readonly from: number,
    readonly n: number,
  ) {
    this.#records = records;
  }

  /** Each message's context, at the same index. */
  get records(): readonly RecordContext[] {
    if (this.#records !== undefined) return this.#records;
    const { lane, offsets, from, n } = this;
    const records = new Array<BatchRecordContext<M>>(n);
    for (let j = 0; j < n; j++) records[j] = new BatchRecordContext<M>(lane!, offsets![from + j], 1, undefined);
    return this.#records = records;
  }

  /** Aborted when any record's `signal` is. */
  get signal(): AbortSignal {
    return this.batchSignal !== undefined ? this.batchSignal.signal : this.lane!.controller.signal;
  }
}
