/**
 * The engine interface: the small surface where the JS and the WASM backends
 * plug in (like a p-queue backend). The {@link Tracker} façade validates and
 * converts every input first, so an engine sees only numbers that already keep
 * the contract; both engines must answer every call identically.
 *
 * @module
 */

/** What a completion did. */
export const Completion = {
  /** Not accepted: the handle or offset was never issued by this tracker (foreign, stale, unknown, or the tracker is revoked). */
  Rejected: 0,
  /** Accepted earlier already: nothing changed. */
  Duplicate: 1,
  /** Newly completed; the safe position did not move (an earlier record is still unfinished). */
  Completed: 2,
  /** Newly completed and the safe position moved forward. */
  Advanced: 3,
} as const;
/** One of the {@link Completion} codes. */
export type Completion = (typeof Completion)[keyof typeof Completion];

/**
 * One tracker's storage and hot path inside an engine.
 *
 * Positions are numbers; `-1` means "not known yet" (no start given and nothing
 * registered). Handles are `base + seq`, seq counting registered records from 0.
 */
export interface EngineTracker {
  /**
   * Appends a validated batch: `offsets[0..count)` strictly increasing, the first not
   * below {@link delivered}, `next` past the last (or not below `delivered` when empty),
   * and room for `count` more retained entries. Returns the handle of `offsets[0]`
   * (the batch's handles are consecutive).
   */
  register(offsets: Float64Array, count: number, next: number): number;
  /**
   * Registers `offsets[0..count)` (count > 0) if it is plainly valid (`plainBatch` of
   * plain_batch.ts, with {@link delivered} as the floor) and returns the handle of
   * `offsets[0]`; otherwise returns -1 and changes nothing. The caller has checked that
   * `next` is a safe integer past the last offset and that `count` more entries fit.
   */
  registerPlain(offsets: Float64Array, count: number, next: number): number;
  /** Completes one record by handle. Anything not issued (or non-integer) is `Rejected`. */
  complete(handle: number): Completion;
  /** Completes `handles[0..count)`; returns how many were newly completed. */
  completeMany(handles: Float64Array, count: number): number;
  /** Completes the delivered record at `offset`; offsets below {@link safe} (and not below the first delivered offset) are `Duplicate`. */
  completeOffset(offset: number): Completion;
  /** The safe position: offset of the oldest unfinished record, else the last batch's `next`. */
  safe(): number;
  /** The last batch's `next` position (or the start). */
  delivered(): number;
  /** Entries held: unfinished plus completed-but-blocked. */
  retained(): number;
  /** Completed entries still held behind an unfinished head. */
  blocked(): number;
  /** Handle of the oldest retained entry (equals the next handle to issue when none is retained). */
  headHandle(): number;
  /**
   * Writes up to `maxRuns` pairs (startOffset, length) into out[0 .. 2·n) describing the
   * registered records that are not completed, from the head on, in offset order; returns n.
   * A pair covers consecutive *delivered* offsets only: it ends at an offset gap (offsets that
   * were never delivered lie between pairs, never inside one). out.length ≥ 2·maxRuns.
   * When n = maxRuns there may be more (the caller treats everything past the last pair as unknown).
   *
   * Every pair is maximal: the record after its last one is completed, lies past an
   * offset gap, or was not registered. So the answer is a function of the tracker's
   * state alone, and a smaller `maxRuns` gives a prefix of it. Read from the bitmap
   * words, never per record: O(words scanned + pairs written · log runs), where whole
   * words of completed records are skipped via the summary level and a word of pending
   * records is one step.
   */
  unfinishedRuns(out: Float64Array, maxRuns: number): number;
  /** Bytes of storage this tracker holds right now. */
  bytes(): number;
  /** Frees the storage; the tracker is never called again. */
  release(): void;
}

/** A backend that opens trackers. */
export interface Engine {
  /** `"js"` or `"wasm"`. */
  readonly kind: "js" | "wasm";
  /**
   * Opens a tracker.
   * @param base first handle: an integer in [2^32, 2^52) (see handle_space.ts); handles below it are rejected
   * @param start safe position before anything is registered, or -1 when unknown
   * @param capacity maximum retained entries (validated by the façade: 1..2^30)
   */
  open(base: number, start: number, capacity: number): EngineTracker;
}
