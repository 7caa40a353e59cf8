/**
 * The tracker: one partition assignment's completed prefix.
 *
 * @module
 */
import { Completion, type Engine, type EngineTracker } from "./engine.ts";
import { type EngineChoice, resolveEngine } from "./engines.ts";
import {
  CapacityError,
  InvalidArgumentError,
  InvalidBatchError,
  RevokedError,
  describe,
} from "../errors.ts";
import { HandleSpace, type Lease } from "./handle_space.ts";
import { type OffsetInput, toOffset } from "./offset.ts";

/** A record's handle: a number issued at registration, valid only for the tracker that issued it. */
export type Handle = number;

/** Options of a {@link Tracker}. */
export interface TrackerOptions {
  /** The safe position before anything is registered (e.g. the committed offset). Omitted: unknown until the first batch. */
  start?: OffsetInput;
  /** Most entries held at once, pending and completed-but-blocked alike. Default 16,777,216; at most 2^30. */
  capacity?: number;
  /** `"auto"` (default: WASM when it loads, else JS), `"js"`, `"wasm"`, or an engine object. */
  engine?: EngineChoice;
  /** Milliseconds clock for ages; default `Date.now`. */
  clock?: () => number;
}

/** A snapshot of one tracker. */
export interface TrackerStats {
  /** Which engine holds the storage. */
  engine: "js" | "wasm";
  /** Registered records not completed yet. */
  pending: number;
  /** Completed records held behind an unfinished earlier one. */
  blocked: number;
  /** `pending + blocked`: what counts against the capacity. */
  retained: number;
  /** The capacity in entries. */
  capacity: number;
  /** Offset of the oldest unfinished record, if any. */
  oldestPendingOffset: number | undefined;
  /** Milliseconds since that record's batch was registered, if any. */
  oldestPendingAgeMs: number | undefined;
  /** The safe position (resume offset justified by completed work), if known. */
  safe: number | undefined;
  /** Where delivery has reached: the last batch's `next` (or the start), if known. */
  delivered: number | undefined;
  /** Bytes of storage held. */
  bytes: number;
}

/** Default capacity: 2^24 entries (a 2 MiB bitmap when full). */
export const DEFAULT_CAPACITY = 16_777_216;
/** Largest capacity accepted: 2^30 entries. */
export const MAX_CAPACITY = 1_073_741_824;

// Slices start at 1: every handle is at least 2^32, never a small integer, so code that
// passes handles around is compiled for one number representation from the first tracker
// on (a first tracker with small-integer handles would make JITs specialise, then deopt).
const handleSpace = new HandleSpace();
// A tracker dropped without revoke() gives its slice back when it is collected.
const leases: FinalizationRegistry<Lease> | undefined = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry<Lease>((lease) => handleSpace.release(lease))
  : undefined;
let offsetScratch = new Float64Array(1024);
let handleScratch = new Float64Array(1024);

/**
 * Tracks one partition assignment: registers delivered batches, takes completions in
 * any order, and answers the safe position to commit — the offset of the oldest
 * unfinished record, or the last batch's `next` when everything is done.
 *
 * Single owner, no I/O. Handles are dense per tracker (a batch's handles are
 * `first, first + 1, …`) and never accepted by another tracker, including the
 * tracker of a later assignment of the same partition, however many trackers the
 * process creates: a slice of the handle space is reused only by one tracker at a time
 * and only above every handle its earlier holders issued. The exact limits: at most
 * 2^20 − 1 trackers live at once (beyond, the constructor throws
 * `HandleSpaceError`), and each tracker registers at most 3 × 2^30 records over
 * its life for the guarantee to hold (past that its handles run into the next slice;
 * the tracker itself keeps working). Slices used up this way are retired; the process
 * can issue at least (2^20 − 1) × 2^30 ≈ 10^15 handles in all.
 *
 * @example
 * ```ts
 * import { Completion, Tracker } from "offset-frontier/tracker";
 * const t = new Tracker({ start: 100 });
 * const h = t.register([100, 104, 105], 106); // handles h, h + 1, h + 2
 * t.complete(h + 2); // Completion.Completed: 100 is still unfinished
 * t.safe; // 100
 * t.complete(h); // Completion.Advanced
 * t.safe; // 104
 * t.complete(h + 1);
 * t.safe; // 106
 * t.complete(h + 1); // Completion.Duplicate: a no-op
 * t.revoke();
 * t.complete(h); // Completion.Rejected: not this tracker's (revoked, foreign or not a handle); never throws
 * ```
 */
export class Tracker {
  readonly #engine: Engine;
  readonly #capacity: number;
  readonly #clock: () => number;
  #origin: number; // the start, else the first registered offset (-1: neither yet)
  #store: EngineTracker | undefined;
  #batchSeq: number[] = []; // first handle of each batch still holding pending records
  #batchAt: number[] = []; // its registration time
  #batchHead = 0;
  readonly #lease: Lease;

  /**
   * A tracker for a new partition assignment, with nothing registered.
   * @param options start, capacity, engine and clock
   * @throws {InvalidOffsetError} for a bad `start`
   * @throws {InvalidArgumentError} for a bad capacity, engine or clock
   * @throws {EngineUnavailableError} for `engine: "wasm"` where it cannot load
   * @throws {HandleSpaceError} when 2^20 − 1 trackers are live (or the handle space is used up)
   */
  constructor(options: TrackerOptions = {}) {
    const { capacity = DEFAULT_CAPACITY, clock = Date.now } = options;
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
      throw new InvalidArgumentError(`capacity must be an integer in [1, 2^30]; got ${describe(capacity)}`);
    }
    if (typeof clock !== "function") throw new InvalidArgumentError(`clock must be a function; got ${describe(clock)}`);
    const start = options.start === undefined ? -1 : toOffset(options.start, "start");
    this.#origin = start;
    this.#engine = resolveEngine(options.engine);
    this.#capacity = capacity;
    this.#clock = clock;
    const lease = handleSpace.acquire();
    try {
      this.#store = this.#engine.open(lease.base, start, capacity);
    } catch (error) {
      handleSpace.release(lease);
      throw error;
    }
    this.#lease = lease;
    leases?.register(this, lease, lease);
  }

  /** Which engine this tracker runs on. */
  get engine(): "js" | "wasm" {
    return this.#engine.kind;
  }

  /** The capacity in entries. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Whether {@link revoke} was called. */
  get revoked(): boolean {
    return this.#store === undefined;
  }

  /**
   * The safe position: everything delivered below it is complete. `undefined` only
   * before the first batch when no start was given.
   * @throws {RevokedError} after {@link revoke}
   */
  get safe(): number | undefined {
    const s = this.#live("read the safe position of").safe();
    return s < 0 ? undefined : s;
  }

  /**
   * Where delivery has reached: the last batch's `next` (or the start).
   * @throws {RevokedError} after {@link revoke}
   */
  get delivered(): number | undefined {
    const d = this.#live("read the delivered position of").delivered();
    return d < 0 ? undefined : d;
  }

  /**
   * Where this assignment began: the `start` given, else the first registered offset
   * (`undefined` before either). Everything delivered from there up to {@link safe} is finished.
   */
  get origin(): number | undefined {
    return this.#origin < 0 ? undefined : this.#origin;
  }

  /** Completed records held behind an unfinished earlier one (`stats().blocked`, without the snapshot); 0 after {@link revoke}. */
  get blocked(): number {
    return this.#store === undefined ? 0 : this.#store.blocked();
  }

  /** Entries held, pending and completed-but-blocked (`stats().retained`, without the snapshot); 0 after {@link revoke}. */
  get retained(): number {
    return this.#store === undefined ? 0 : this.#store.retained();
  }

  /**
   * Registers a delivered batch, whole and in delivery order, before any of its work
   * is dispatched. The whole batch is validated first; on any error nothing changes.
   *
   * @param offsets the records' offsets, strictly increasing, the first not below the
   *   previous batch's `next` (or the start)
   * @param next the batch's next position: past the last offset (control records and
   *   aborted transactions may leave a gap), e.g. KafkaJS `batch.lastOffset() + 1`
   * @returns the first record's handle; the batch's handles are consecutive
   * @throws {InvalidOffsetError} for an offset that is not an integer in [0, 2^53)
   * @throws {InvalidBatchError} for unsorted offsets, an overlap with earlier batches or a bad `next`
   * @throws {CapacityError} when the batch would exceed the capacity
   * @throws {RevokedError} after {@link revoke}
   */
  register(offsets: ArrayLike<OffsetInput>, next: OffsetInput): Handle {
    const store = this.#live("register a batch with");
    // The common case, a non-empty Float64Array of valid offsets with a valid next, is
    // checked and applied by the engine in one call (the WASM engine checks it in WASM).
    if (offsets instanceof Float64Array) {
      const count = offsets.length;
      if (
        count > 0 && typeof next === "number" && next > offsets[count - 1] && Number.isSafeInteger(next) &&
        store.retained() + count <= this.#capacity
      ) {
        const first = store.registerPlain(offsets, count, next);
        if (first >= 0) {
          if (this.#origin < 0) this.#origin = offsets[0];
          this.#registered(store, first, count);
          return first;
        }
      }
    }
    return this.#registerChecked(store, offsets, next);
  }

  /** register() for any input: validates and converts everything, naming the first bad value; changes nothing on error. */
  #registerChecked(store: EngineTracker, offsets: ArrayLike<OffsetInput>, next: OffsetInput): Handle {
    if (offsets === null || typeof offsets !== "object" || typeof offsets.length !== "number") {
      throw new InvalidBatchError(`offsets must be an array of offsets; got ${describe(offsets)}`);
    }
    const count = offsets.length;
    const floor = store.delivered();
    if (offsetScratch.length < count) offsetScratch = new Float64Array(Math.max(count, offsetScratch.length * 2));
    const scratch = offsetScratch;
    // Every value is converted before any order error is thrown: a bad offset anywhere
    // (InvalidOffsetError) names itself even when the batch is also out of order.
    let prev = -1;
    let order: string | undefined; // the first order error
    for (let i = 0; i < count; i++) {
      const v = offsets[i];
      const o = typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : toOffset(v, `offsets[${i}]`);
      if (order === undefined) {
        if (i === 0 ? o < floor : o <= prev) {
          order = i === 0
            ? `offsets[0] = ${o} is below the previous batch's next position ${floor}: batches must not overlap`
            : `offsets must be strictly increasing: offsets[${i}] = ${o} follows offsets[${i - 1}] = ${prev}`;
        }
      }
      scratch[i] = o;
      prev = o;
    }
    const n = toOffset(next, "next");
    if (order !== undefined) throw new InvalidBatchError(order);
    if (count > 0 && n <= prev) {
      throw new InvalidBatchError(`next must be past the batch's last offset ${prev}; got ${n}`);
    }
    if (count === 0 && n < floor) {
      throw new InvalidBatchError(`next of an empty batch must not be below the previous next position ${floor}; got ${n}`);
    }
    const retained = store.retained();
    if (retained + count > this.#capacity) throw new CapacityError(this.#capacity, retained, count);
    const first = store.register(scratch, count, n);
    if (this.#origin < 0) this.#origin = count > 0 ? scratch[0] : n;
    if (count > 0) this.#registered(store, first, count);
    return first;
  }

  /** Notes a registered non-empty batch's first handle and time (for the oldest pending record's age) and the lease's end. */
  #registered(store: EngineTracker, first: number, count: number): void {
    this.#lease.end = first + count; // later holders of the slice start above it
    this.#trimBatches(store.headHandle());
    this.#batchSeq.push(first);
    this.#batchAt.push(this.#clock());
  }

  /**
   * Marks one record complete by its handle. O(1); moving the safe position past
   * finished records costs O(words).
   * @returns `Rejected` for a handle this tracker did not issue or after {@link revoke},
   *   `Duplicate` when already complete, else `Completed` or `Advanced`
   */
  complete(handle: Handle): Completion {
    const store = this.#store;
    if (store === undefined || typeof handle !== "number") return Completion.Rejected;
    return store.complete(handle);
  }

  /**
   * Marks many records complete in one call (a `Float64Array` is used as is).
   * Handles that are not accepted are skipped.
   * @returns how many records were newly completed
   */
  completeMany(handles: ArrayLike<Handle>): number {
    const store = this.#store;
    if (store === undefined) return 0;
    if (handles instanceof Float64Array) return store.completeMany(handles, handles.length);
    const count = handles.length;
    if (handleScratch.length < count) handleScratch = new Float64Array(Math.max(count, handleScratch.length * 2));
    for (let i = 0; i < count; i++) {
      const h = handles[i];
      handleScratch[i] = typeof h === "number" ? h : NaN;
    }
    return store.completeMany(handleScratch, count);
  }

  /**
   * Marks the delivered record at `offset` complete: O(1) within a run of dense
   * offsets, O(log runs) across gaps. An offset below the safe position (and not
   * below the first delivered offset) is already behind the frontier: `Duplicate`.
   * @returns `Rejected` for an offset that was not delivered or after {@link revoke}
   * @throws {InvalidOffsetError} for an offset that is not an integer in [0, 2^53)
   */
  completeOffset(offset: OffsetInput): Completion {
    const o = toOffset(offset);
    const store = this.#store;
    return store === undefined ? Completion.Rejected : store.completeOffset(o);
  }

  /**
   * A snapshot: pending, completed-but-blocked, oldest pending offset and age, positions.
   * @throws {RevokedError} after {@link revoke}
   */
  stats(): TrackerStats {
    const store = this.#live("read the stats of");
    const retained = store.retained();
    const blocked = store.blocked();
    const pending = retained - blocked;
    const safe = store.safe();
    const delivered = store.delivered();
    let age: number | undefined;
    if (pending > 0) {
      this.#trimBatches(store.headHandle());
      age = this.#clock() - this.#batchAt[this.#batchHead];
    }
    return {
      engine: this.#engine.kind,
      pending,
      blocked,
      retained,
      capacity: this.#capacity,
      oldestPendingOffset: pending > 0 ? safe : undefined,
      oldestPendingAgeMs: age,
      safe: safe < 0 ? undefined : safe,
      delivered: delivered < 0 ? undefined : delivered,
      bytes: store.bytes(),
    };
  }

  /**
   * The unfinished records from the head on, as runs in offset space: writes up to
   * `maxRuns` pairs `(startOffset, length)` into `out[0 .. 2·n)` and returns n. Each pair
   * covers `length` consecutive *delivered* offsets from `startOffset`, all registered and
   * not completed; pairs come in offset order, and a pair ends where the next record is
   * completed or lies past an offset gap (offsets never delivered are inside no pair).
   * The first pair starts at {@link safe} when anything is pending. Every offset in
   * [safe, last pair's end) that no pair covers is completed or was never delivered; when
   * n = maxRuns there may be more pairs, so what lies past the last pair is unknown to the
   * caller. A smaller `maxRuns` gives a prefix of the same answer.
   *
   * Read from the bitmap words, never per record: whole words of completed records are
   * skipped via the summary level, a word of pending records is one step, so the cost is
   * O(words scanned + pairs written · log runs); cheap enough for every commit. Changes nothing.
   *
   * @example
   * ```ts
   * import { Tracker } from "offset-frontier/tracker";
   * const t = new Tracker({ start: 100 });
   * const h = t.register([100, 101, 102, 105, 106, 107], 110);
   * t.complete(h + 1); // offset 101
   * t.complete(h + 5); // offset 107
   * const out = new Float64Array(8);
   * const n = t.unfinishedRuns(out, 4); // 3
   * out.subarray(0, 2 * n); // [100, 1, 102, 1, 105, 2]: 103 and 104 were never delivered
   * ```
   * @param out where the pairs go; `out.length` ≥ 2·maxRuns
   * @param maxRuns most pairs to write, an integer ≥ 0
   * @returns n, the number of pairs written
   * @throws {InvalidArgumentError} when `out` is not a Float64Array, `maxRuns` is not an
   *   integer ≥ 0, or `out` is shorter than 2·maxRuns
   * @throws {RevokedError} after {@link revoke}
   */
  unfinishedRuns(out: Float64Array, maxRuns: number): number {
    const store = this.#live("read the unfinished runs of");
    if (!(out instanceof Float64Array)) {
      throw new InvalidArgumentError(`out must be a Float64Array; got ${describe(out)}`);
    }
    if (!Number.isInteger(maxRuns) || maxRuns < 0) {
      throw new InvalidArgumentError(`maxRuns must be an integer ≥ 0; got ${describe(maxRuns)}`);
    }
    if (out.length < 2 * maxRuns) {
      throw new InvalidArgumentError(
        `out must hold 2 · maxRuns = ${2 * maxRuns} numbers for maxRuns = ${maxRuns}; got a Float64Array of length ${out.length}`,
      );
    }
    return store.unfinishedRuns(out, maxRuns);
  }

  /**
   * Ends the assignment: frees the memory; afterwards nothing is accepted and the
   * positions can no longer be read. Idempotent.
   */
  revoke(): void {
    if (this.#store === undefined) return;
    this.#store.release();
    this.#store = undefined;
    leases?.unregister(this.#lease);
    handleSpace.release(this.#lease); // after: this tracker rejects its own handles, later ones start above them
    this.#batchSeq = [];
    this.#batchAt = [];
  }

  /** Drops registration times of batches wholly behind the head handle. */
  #trimBatches(head: number): void {
    const seq = this.#batchSeq, at = this.#batchAt;
    while (this.#batchHead + 1 < seq.length && seq[this.#batchHead + 1] <= head) this.#batchHead++;
    if (this.#batchHead > 64 && this.#batchHead * 2 > seq.length) {
      seq.splice(0, this.#batchHead);
      at.splice(0, this.#batchHead);
      this.#batchHead = 0;
    }
  }

  #live(action: string): EngineTracker {
    if (this.#store === undefined) throw new RevokedError(`cannot ${action} a revoked tracker`);
    return this.#store;
  }
}
