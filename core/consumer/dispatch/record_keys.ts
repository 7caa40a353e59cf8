/**
 * Where the dispatcher reads records' keys under `key` ordering: a record's key hash for its
 * {@link Work} (from the client's `keyHashOf` when it has one, else a hash of its `keyOf`
 * string), and whether two records whose hashes are equal have the same key (their keys read
 * then, once per record). Under any other ordering, or without a reader, no record has a key.
 *
 * @module
 */
import { hashString, type KeyReader } from "./distinct_keys.ts";
import type { RecordLane, Work } from "./work.ts";

/** Records' keys as the dispatcher reads them (see the module doc). */
export class RecordKeys<M> {
  readonly #keys: KeyReader<M> | undefined;
  /** {@link keyHash} as a function (what a queued run calls for each record it makes a `Work` of); `undefined` when no record has a key. */
  readonly hashOf: ((message: M) => number) | undefined;
  /** Whether two records whose key hashes are equal have the same key. */
  readonly same = <L extends RecordLane>(a: Work<M, L>, b: Work<M, L>): boolean => {
    const keys = this.#keys!;
    return (a.key ??= keys.keyOf(a.message)) === (b.key ??= keys.keyOf(b.message));
  };

  /**
   * @param keys where keys are read; `undefined`: no record has a key (not `key` ordering, or no reader)
   */
  constructor(keys: KeyReader<M> | undefined) {
    this.#keys = keys;
    // Straight to the reader: this runs once per record a queued run makes a Work of.
    this.hashOf = keys === undefined
      ? undefined
      : typeof keys.keyHashOf === "function"
      ? (message: M): number => {
        const h = keys.keyHashOf!(message);
        return h === undefined ? -1 : h & 0x3fffffff;
      }
      : (message: M): number => {
        const k = keys.keyOf(message);
        return k === undefined ? -1 : hashString(k) & 0x3fffffff;
      };
  }

  /** Whether records have keys ({@link keyHash} is worth calling). */
  get keyed(): boolean {
    return this.#keys !== undefined;
  }

  /**
   * A record's key hash: an integer in [0, 2^30), equal for equal keys; -1 for a record
   * without a key, and for every record when records have no keys.
   */
  keyHash(message: M): number {
    return this.hashOf === undefined ? -1 : this.hashOf(message);
  }
}
