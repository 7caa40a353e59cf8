/**
 * A lane's records waiting to run (`Lane.ready`), in delivery order. A delivered batch goes
 * in whole as one {@link RecordRun} (its messages, offsets and first handle, and under `key`
 * ordering its key hashes: no object per record), and a record's {@link Work} is made only when
 * the dispatcher takes it. So a `Work` lives while its record runs (at most the in-flight bound
 * at a time), not while it waits behind thousands of others: the records a lane retains cost
 * no object each, and the few `Work`s alive die young instead of being copied by every garbage
 * collection that happens while a batch waits. Single `Work`s (a claim's unfinished records, a
 * drain's kept ones) go in as they are.
 *
 * @module
 */
import { Fifo } from "./fifo.ts";
import { type RecordLane, Work } from "./work.ts";

/**
 * The records `[next, end)` of one delivered batch, not taken yet. Under `key` ordering their
 * key hashes (`Dispatcher.keyHash`) are read when the run is made, in one pass over the batch,
 * and kept in an `Int32Array` (4 bytes a record): the client has just decoded those keys, so
 * they are still in the processor's caches, and one record's loads do not wait for the last's.
 * Read when each record starts, thousands of records later, a key is a cache miss its record
 * waits for: in a profile of `bench:consumer`'s `key-async` through `@platformatic/kafka` (Node
 * 24; its no-op handler reads nothing else of the record) making a `Work` and hashing its key
 * took 3.75 % of the CPU, and this one pass takes 1.44 %.
 */
export class RecordRun<M, L extends RecordLane> {
  /** `key` ordering: the key hash of record `i` at `hashes[i - from]`; else none (every `Work` gets -1). */
  readonly #hashes: Int32Array | undefined;
  readonly #from: number;

  /**
   * @param lane the lane the records belong to
   * @param messages the batch's records (never changed after delivery)
   * @param offsets their offsets (never changed after delivery)
   * @param first the tracker handle of `messages[0]` (handles are consecutive)
   * @param next the first record not taken
   * @param end one past the last record of the run
   * @param hash `key` ordering: a record's key hash (an integer in [0, 2^30), or -1: no key)
   */
  constructor(
    readonly lane: L,
    readonly messages: readonly M[],
    readonly offsets: ArrayLike<number>,
    readonly first: number,
    public next: number,
    readonly end: number,
    hash: ((message: M) => number) | undefined,
  ) {
    this.#from = next;
    if (hash !== undefined && end > next) {
      const hashes = this.#hashes = new Int32Array(end - next);
      for (let i = next; i < end; i++) hashes[i - next] = hash(messages[i]);
    }
  }

  /** The `Work` of record `i` of the batch (`next` ≤ i < `end` when the run was made). */
  work(i: number): Work<M, L> {
    const hashes = this.#hashes;
    return new Work<M, L>(this.lane, this.messages[i], this.offsets[i], this.first + i, hashes === undefined ? -1 : hashes[i - this.#from]);
  }
}

/** Records waiting to run, in delivery order (see the module doc). */
export class ReadyQueue<M, L extends RecordLane> {
  readonly #entries = new Fifo<Work<M, L> | RecordRun<M, L>>();
  #length = 0;

  /** Records waiting. */
  get length(): number {
    return this.#length;
  }

  /** Appends one record. */
  push(work: Work<M, L>): void {
    this.#entries.push(work);
    this.#length++;
  }

  /** Appends records in order. */
  pushAll(works: readonly Work<M, L>[]): void {
    this.#entries.pushAll(works);
    this.#length += works.length;
  }

  /** Appends the records `[from, end)` of a delivered batch, in order, as one run (nothing is made per record). */
  pushRun(run: RecordRun<M, L>): void {
    if (run.next >= run.end) return;
    this.#entries.push(run);
    this.#length += run.end - run.next;
  }

  /** Removes the oldest record and returns its `Work` (made now for a record of a run). */
  shift(): Work<M, L> | undefined {
    const e = this.#entries.peek();
    if (e === undefined) return undefined;
    this.#length--;
    // Not `instanceof`: a loader that keeps class names (tsx: Object.defineProperty on the
    // class) takes V8's instanceof off its fast path, 13 ns a call against 2 (Node 24).
    if (e.constructor === RecordRun) {
      const run = e as RecordRun<M, L>;
      const w = run.work(run.next++);
      if (run.next === run.end) this.#entries.shift();
      return w;
    }
    this.#entries.shift();
    return e as Work<M, L>;
  }

  /**
   * What the queue holds, oldest first, as `Work`s (a copy, a rare path: drains and tests).
   * The records of runs stay in their runs: the `Work`s made for them here are not the ones
   * {@link shift} returns later.
   */
  items(): Work<M, L>[] {
    const out: Work<M, L>[] = [];
    for (const e of this.#entries.items()) {
      if (e instanceof RecordRun) for (let i = e.next; i < e.end; i++) out.push(e.work(i));
      else out.push(e);
    }
    return out;
  }

  /** Empties the queue; returns what it held, oldest first, as `Work`s (made now for the records of runs). */
  clear(): Work<M, L>[] {
    const rest = this.items();
    this.#entries.clear();
    this.#length = 0;
    return rest;
  }

  /**
   * Removes the records `drop` says to (a rare path: every record of the queue gets its
   * `Work`, and the queue keeps those of the records it keeps); returns them, oldest first.
   */
  removeIf(drop: (work: Work<M, L>) => boolean): Work<M, L>[] {
    const removed: Work<M, L>[] = [];
    for (const w of this.clear()) {
      if (drop(w)) removed.push(w);
      else this.push(w);
    }
    return removed;
  }
}
