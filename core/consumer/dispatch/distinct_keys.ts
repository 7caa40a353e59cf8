/**
 * Whether a run of records holds no key twice, in O(n): the check the batch handler's
 * direct start makes before it hands `maxRecords` records of a delivery to one call under
 * `key` ordering (direct_batch.ts). A batch must not hold a key twice: a record failed by
 * its per-record result retries later, while a later record of its key in the same batch
 * already ran.
 *
 * Each keyed record's key hash goes into an open-addressing table sized to the batch (at
 * least twice as many slots as records, so a probe ends at an empty slot). Two records whose
 * hashes are equal are compared exactly (their keys from `keyOf`), so a hash collision costs
 * one comparison and never lets a key in twice, nor cuts a batch that holds none: the check
 * answers exactly "no key twice", whatever the hash.
 *
 * The hash comes from the binding's {@link KeyHashOf} when it has one (over the key's bytes,
 * no string made); else from the string `keyOf` returns.
 *
 * @module
 */

/**
 * A record's key hash: any 32-bit number, equal for records whose keys (`keyOf`) are equal;
 * `undefined` exactly when `keyOf` returns `undefined` (no key).
 */
export type KeyHashOf<M> = (message: M) => number | undefined;

/**
 * Where the check reads keys: a client binding (its methods are called on it, so that a
 * runtime can inline them), or any object with these two.
 */
export interface KeyReader<M> {
  /** The record's key (`undefined`: none, never clashes). */
  keyOf(message: M): string | undefined;
  /** Optional: the record's {@link KeyHashOf}. */
  keyHashOf?(message: M): number | undefined;
}

/** FNV-1a over a string's UTF-16 code units: the hash of a key when the binding gives none. */
export function hashString(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** The no-key-twice check over runs of records (see the module doc); one per consumer, not reentrant. */
export class DistinctKeys<M> {
  readonly #reader: KeyReader<M>;
  readonly #hashed: boolean;
  // The table: a slot is in use in this check when its stamp is the check's; it holds the
  // record's index in the run and its hash. 2^bits slots, at least 2 per record.
  #bits = 0;
  #stamp = new Uint32Array(0);
  #index = new Int32Array(0);
  #hash = new Int32Array(0);
  #gen = 0;

  /**
   * @param reader where keys (and their hashes, when it has `keyHashOf`) are read
   */
  constructor(reader: KeyReader<M>) {
    this.#reader = reader;
    this.#hashed = typeof reader.keyHashOf === "function";
  }

  /**
   * Whether `messages[from .. from + n)` hold no key twice (records without a key never clash).
   * @returns exactly that: a hash collision between different keys does not make it `false`
   */
  check(messages: readonly M[], from: number, n: number): boolean {
    if (n < 2) return true;
    if (n * 2 > 1 << this.#bits) this.#grow(n);
    if (++this.#gen === 0xffffffff) {
      this.#stamp.fill(0);
      this.#gen = 1;
    }
    const gen = this.#gen, stamp = this.#stamp, index = this.#index, hashes = this.#hash;
    const shift = 32 - this.#bits, mask = (1 << this.#bits) - 1;
    const reader = this.#reader, hashed = this.#hashed;
    for (let j = 0; j < n; j++) {
      const m = messages[from + j];
      let h: number;
      if (hashed) {
        const x = reader.keyHashOf!(m);
        if (x === undefined) continue;
        h = x | 0;
      } else {
        const key = reader.keyOf(m);
        if (key === undefined) continue;
        h = hashString(key);
      }
      // Fibonacci hashing: the top bits of h × 2^32/φ, so that a weak hash still spreads.
      let slot = Math.imul(h, 0x9e3779b1) >>> shift;
      while (stamp[slot] === gen) {
        // equal hashes: the keys decide (a collision only costs this comparison)
        if (hashes[slot] === h && reader.keyOf(messages[from + index[slot]]) === reader.keyOf(m)) return false;
        slot = (slot + 1) & mask;
      }
      stamp[slot] = gen;
      index[slot] = j;
      hashes[slot] = h;
    }
    return true;
  }

  /** A table of at least `2n` slots (and 16). */
  #grow(n: number): void {
    let bits = 4;
    while (1 << bits < 2 * n) bits++; // n ≤ concurrency: far below 2^29
    this.#bits = bits;
    this.#stamp = new Uint32Array(1 << bits);
    this.#index = new Int32Array(1 << bits);
    this.#hash = new Int32Array(1 << bits);
    this.#gen = 0;
  }
}
