/**
 * The keys a lane holds under `key` ordering: key → the one record holding it (in flight,
 * or waiting for a slot). It holds at most `maxInFlightPerPartition` keys, so it is a small
 * open-addressing table (linear probing, deletion by backward shift: no tombstones) over a
 * preallocated array and the keys' hashes, sized at least 32 times the keys it holds up to
 * 1,024 slots (past that, twice). A sparse table matters here: the keys in flight change with
 * every record, and at half full a probe run or a backward shift of a few slots, each a branch
 * that random hashes make unpredictable, cost about 40 ns a record against 15 at an eighth
 * full and a few less again at a thirty-second (Node 24, 16 keys in flight, a take and a delete
 * per record). Thirty-two slots a key stay small where it matters: 16 keys in flight (the
 * default bound) take 512 slots, 6 KB.
 *
 * Why not a `Map` of key strings: a few keys inserted and deleted over and over (every
 * record takes its key and gives it back) cost a `Map` a rehash into a new table every few
 * operations, and every record a key string. Here a record brings only its key's hash
 * (`Work.keyHash`: the binding's `keyHashOf`, over the key's bytes, when it has one); two
 * records whose hashes are equal are told apart by `same`, which compares their keys
 * themselves (read then, once per record). A hash collision costs one comparison and never
 * makes two keys one, nor one key two.
 *
 * @module
 */

/** What the table keeps: a record with its key's hash. */
export interface KeyHolder {
  /** Its key's hash: an integer in [0, 2^30) (≥ 0: it has a key). */
  readonly keyHash: number;
}

/** Keys held → their holders (see the module doc). */
export class HeldKeys<W extends KeyHolder> {
  readonly #same: (a: W, b: W) => boolean;
  #bits = 6;
  #shift = 26; // 32 - #bits: a hash's home slot is its top #bits bits after the Fibonacci multiply
  #mask = 63;
  #slots: (W | undefined)[] = new Array<W | undefined>(64).fill(undefined);
  #hashes = new Int32Array(64);
  #size = 0;
  #limit = 2; // keys it holds before it grows: a thirty-second of its slots, half past 1,024 slots

  /**
   * An empty table.
   * @param same whether two records with equal hashes have the same key
   */
  constructor(same: (a: W, b: W) => boolean) {
    this.#same = same;
  }

  /** Whether records `a` and `b` (both with a key) have the same key. */
  sameKey(a: W, b: W): boolean {
    return a === b || (a.keyHash === b.keyHash && this.#same(a, b));
  }

  /** Keys held. */
  get size(): number {
    return this.#size;
  }

  #home(h: number): number {
    return Math.imul(h, 0x9e3779b1) >>> this.#shift;
  }

  /** The record holding the key of `w` (maybe `w` itself), if any. */
  get(w: W): W | undefined {
    const slots = this.#slots, hashes = this.#hashes, mask = this.#mask, h = w.keyHash;
    for (let i = this.#home(h);; i = (i + 1) & mask) {
      const x = slots[i];
      if (x === undefined) return undefined;
      if (hashes[i] === h && (x === w || this.#same(x, w))) return x;
    }
  }

  /** The slot of `w`, or -1. */
  #slotOf(w: W): number {
    const slots = this.#slots, mask = this.#mask;
    for (let i = Math.imul(w.keyHash, 0x9e3779b1) >>> this.#shift;; i = (i + 1) & mask) {
      const x = slots[i];
      if (x === w) return i;
      if (x === undefined) return -1;
    }
  }

  /**
   * `w` takes its key if no record holds it (returns `undefined`); else returns the record
   * that holds it (`w` takes nothing). One probe run for both.
   */
  take(w: W): W | undefined {
    const slots = this.#slots, hashes = this.#hashes, mask = this.#mask, h = w.keyHash;
    let i = Math.imul(h, 0x9e3779b1) >>> this.#shift;
    for (let x = slots[i]; x !== undefined; x = slots[i = (i + 1) & mask]) {
      if (hashes[i] === h && this.#same(x, w)) return x;
    }
    if (this.#size >= this.#limit) this.add(w);
    else {
      slots[i] = w;
      hashes[i] = h;
      this.#size++;
    }
    return undefined;
  }

  /** `w` takes its key, which no record holds. */
  add(w: W): void {
    if (this.#size >= this.#limit) this.#grow();
    this.#put(w);
    this.#size++;
  }

  #put(w: W): void {
    const slots = this.#slots, mask = this.#mask, h = w.keyHash;
    let i = this.#home(h);
    while (slots[i] !== undefined) i = (i + 1) & mask;
    slots[i] = w;
    this.#hashes[i] = h;
  }

  /** `next`, a record of the same key, takes the key `w` holds. Whether `w` held it. */
  replace(w: W, next: W): boolean {
    const i = this.#slotOf(w);
    if (i < 0) return false;
    this.#slots[i] = next;
    return true;
  }

  /** `w` gives up its key, if it holds it. Whether it did. */
  delete(w: W): boolean {
    const slots = this.#slots, hashes = this.#hashes, mask = this.#mask, shift = this.#shift;
    let i = Math.imul(w.keyHash, 0x9e3779b1) >>> shift;
    for (let x = slots[i]; x !== w; x = slots[i = (i + 1) & mask]) if (x === undefined) return false;
    // Backward shift: each later entry of the probe run moves into the hole unless its
    // home lies cyclically after the hole and at or before its own slot.
    for (let j = (i + 1) & mask; slots[j] !== undefined; j = (j + 1) & mask) {
      const home = Math.imul(hashes[j], 0x9e3779b1) >>> shift;
      if (i < j ? home > i && home <= j : home > i || home <= j) continue;
      slots[i] = slots[j];
      hashes[i] = hashes[j];
      i = j;
    }
    slots[i] = undefined;
    this.#size--;
    return true;
  }

  /** Whether `w` holds its key. */
  holds(w: W): boolean {
    return w.keyHash >= 0 && this.#size > 0 && this.#slotOf(w) >= 0;
  }

  /** The holders now (a copy: a rare path, for a drain and for tests). */
  holders(): W[] {
    const out: W[] = [];
    for (const w of this.#slots) if (w !== undefined) out.push(w);
    return out;
  }

  #grow(): void {
    const old = this.#slots;
    this.#bits++;
    this.#shift = 32 - this.#bits;
    this.#mask = (1 << this.#bits) - 1;
    this.#slots = new Array<W | undefined>(1 << this.#bits).fill(undefined);
    this.#hashes = new Int32Array(1 << this.#bits);
    this.#limit = this.#bits <= 10 ? 1 << (this.#bits - 5) : 1 << (this.#bits - 1);
    for (const w of old) if (w !== undefined) this.#put(w);
  }
}
