/**
 * The batch handler's direct start: while a whole batch of a delivered batch's records may
 * start without queueing ({@link Dispatcher.canStartDirectBatch}), `maxRecords` of them at
 * a time go to the batch handler right from the delivery, as the record handler's direct
 * start does for single records (delivery.ts): no {@link Work}, no queue, no key taken,
 * a two-field context per record made only if the handler reads it, one tracker call for
 * the records that finished. A batch
 * that does not finish in the call (a promise), or fails records, gets its records' `Work`
 * then and settles as a gathered batch would (BatchCollector.settle).
 *
 * It runs only full batches of distinct keys (under `key` ordering a key must not be twice
 * in one batch); the rest of the delivery is queued and gathered as before (a partial batch
 * waits up to `maxWaitMs` for more). A gathered batch waiting for more is filled first with
 * the delivery's first records, through the queue, as it would have been: once it ran (and,
 * its records finished, freed their keys) the delivery's other records may start directly.
 *
 * @module
 */
import { type BatchCollector, isThenable } from "./batch.ts";
import { BatchCall } from "./batch_context.ts";
import type { CommitScheduler } from "../commits/mod.ts";
import { DistinctKeys, type KeyReader } from "../dispatch/mod.ts";
import { type Dispatcher, type Lane, Work } from "../dispatch/mod.ts";
import type { RecordRunner } from "./record_runner.ts";

// Handles of records that finished, applied in one tracker call.
let doneScratch = new Float64Array(1024);

/** What {@link DirectBatches} reads and drives. */
export interface DirectBatchInputs<M> {
  /** The collector: its options and handler, its settling, its batch count. */
  readonly collector: BatchCollector<M>;
  /** Lanes and the direct start's bounds. */
  readonly dispatcher: Dispatcher<M>;
  /** Settles attempts and keeps the record counters. */
  readonly records: RecordRunner<M>;
  /** Told when the safe position moved. */
  readonly scheduler: CommitScheduler;
  /** Where the no-key-twice check reads keys and their hashes (`key` ordering only): the client. */
  readonly keys: KeyReader<M> | undefined;
}

/** Runs full batches of a delivery right in it (see the module doc). */
export class DirectBatches<M> {
  readonly #in: DirectBatchInputs<M>;
  readonly #distinct: DistinctKeys<M> | undefined;
  #inDirect = false;

  /**
   * The direct start of batches over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: DirectBatchInputs<M>) {
    this.#in = inputs;
    this.#distinct = inputs.keys === undefined ? undefined : new DistinctKeys(inputs.keys);
  }

  /**
   * Runs batches of a registered delivery's records from its start, in offset order.
   * @returns the index of the first record not started (the caller queues the rest)
   */
  run(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    if (this.#inDirect) return 0; // a delivery from inside a handler called here queues its batch: the scratch is in use
    this.#inDirect = true;
    try {
      return this.#loop(lane, messages, offsets, first, count);
    } finally {
      this.#inDirect = false;
    }
  }

  #loop(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    const { collector, dispatcher: d } = this.#in;
    const keyed = d.keyed;
    const distinct = this.#distinct;
    const { maxRecords: n, handler } = collector.options;
    let i = 0;
    const waiting = collector.waiting;
    if (waiting > 0 && count >= n) {
      // A gathered batch waits for more: this delivery's first records fill it (through the
      // queue, as they would have), so that it runs now and the rest may start directly.
      i = n - waiting;
      const works = new Array<Work<M, Lane<M>>>(i);
      for (let j = 0; j < i; j++) {
        const m = messages[j];
        works[j] = new Work<M, Lane<M>>(lane, m, offsets[j], first + j, keyed ? d.keyHash(m) : -1);
      }
      d.enqueue(lane, works);
      d.pump();
    }
    if (doneScratch.length < count) doneScratch = new Float64Array(Math.max(count, doneScratch.length * 2));
    const done = doneScratch;
    let k = 0; // handles finished and not applied yet: done[0 .. k)
    while (count - i >= n && collector.waiting === 0 && d.canStartDirectBatch(lane, n)) {
      if (distinct !== undefined && !distinct.check(messages, i, n)) break;
      const batch = messages.slice(i, i + n);
      d.beginDirectMany(lane, n, offsets[i + n - 1]); // offsets increase
      const from = i;
      i += n;
      collector.batches++;
      let result: unknown;
      try {
        result = handler(batch, new BatchCall<M>(undefined, undefined, lane, offsets, from, n));
      } catch (error) {
        k = this.#complete(lane, done, k);
        collector.failAll(this.#works(lane, messages, offsets, first, from, n), error);
        continue;
      }
      if (result === undefined || allOk(result, n)) {
        // every record succeeded in the call: nothing is in flight any more
        d.endDirectMany(lane, n);
        for (let j = first + from, end = j + n; j < end; j++) done[k++] = j;
      } else if (isThenable(result)) {
        const ws = this.#works(lane, messages, offsets, first, from, n);
        result.then((r) => collector.settle(ws, r), (error: unknown) => collector.failAll(ws, error));
      } else {
        k = this.#complete(lane, done, k);
        collector.settle(this.#works(lane, messages, offsets, first, from, n), result); // some records failed (or a result of the wrong shape fails them all)
      }
    }
    this.#complete(lane, done, k);
    lane.notifyIdle();
    return i;
  }

  /** The records `from .. from + n` of a batch run here, as in-flight Works (they take their keys): for a failure or a later settling. */
  #works(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, from: number, n: number): Work<M, Lane<M>>[] {
    const d = this.#in.dispatcher;
    const keyed = d.keyed;
    const ws = new Array<Work<M, Lane<M>>>(n);
    for (let j = 0; j < n; j++) {
      const m = messages[from + j];
      ws[j] = d.keepDirect(lane, m, offsets[from + j], first + from + j, keyed ? d.keyHash(m) : -1);
    }
    return ws;
  }

  /** Applies `done[0 .. k)`, the handles of records that finished; returns 0 (nothing left to apply). */
  #complete(lane: Lane<M>, done: Float64Array, k: number): number {
    if (k === 0 || lane.abandoned) return 0;
    const c = lane.tracker.completeMany(done.subarray(0, k));
    if (c > 0) {
      this.#in.records.completed += c;
      this.#in.scheduler.notify();
    }
    return 0;
  }
}

/** Whether `result` is an array of `n` results none of which is an `Error` (every record succeeded). */
function allOk(result: unknown, n: number): boolean {
  if (!Array.isArray(result) || result.length !== n) return false;
  for (let j = 0; j < n; j++) if (result[j] instanceof Error) return false;
  return true;
}
