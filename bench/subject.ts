/**
 * The bench-side interface every row implements: the tracker (per-call or batched
 * completions on an engine) and the hand-written baselines. Each row runs in its own
 * process, so the scenario loops that call these methods only ever see one class.
 *
 * @module
 */

/** One row of the benchmark: something that tracks the completed prefix of one partition. */
export interface Subject {
  /**
   * How a record is named on completion: `"handle"` (the tracker: `first + i` for the
   * i-th record of a batch whose first key `register` returned) or `"offset"` (the
   * baselines: the record's offset).
   */
  readonly keys: "handle" | "offset";
  /** Registers a delivered batch (offsets strictly increasing; `next` past the last); returns the key of `batch[0]`. */
  register(batch: Float64Array, next: number): number;
  /** Completes one record by its key. */
  complete(key: number): void;
  /** Completes many records by key (a per-call loop except on the `wasm-batch` row). */
  completeMany(keys: Float64Array): void;
  /** Completes one record by its offset. */
  completeOffset(offset: number): void;
  /** The position a consumer would commit (-1 unknown). */
  position(): number;
  /** Records still held (pending plus completed-but-blocked), for stall reports. */
  held(): number;
  /** Storage bytes as the implementation reports them, or `undefined` when it has no such report (baselines: heap is measured). */
  bytes(): number | undefined;
  /** Drops the storage at the end of a pass (the object itself stays referenced until the scenario ends). */
  dispose(): void;
}
