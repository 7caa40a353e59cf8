/**
 * A FIFO with O(1) push and shift: the dispatcher's per-lane queues.
 *
 * A ring over a power-of-two array that doubles when full, so a queue that keeps going
 * from empty to a few items and back (a key's next record handed on as its record before
 * settles, a retry) allocates nothing; a large one (a delivery's records) gives its array
 * back once it is empty.
 *
 * @module
 */

const KEEP = 1024; // an emptied ring up to this size keeps its array

/** A FIFO with O(1) push and shift. */
export class Fifo<T> {
  #items: (T | undefined)[] = new Array<T | undefined>(8).fill(undefined);
  #mask = 7;
  #head = 0;
  #size = 0;

  /** Items queued. */
  get length(): number {
    return this.#size;
  }

  /** Appends an item. */
  push(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) & this.#mask] = item;
    this.#size++;
  }

  /** Appends `items` in order (one growth at most, however many they are). */
  pushAll(items: readonly T[]): void {
    const n = items.length;
    if (this.#size + n > this.#items.length) this.#grow(this.#size + n);
    const slots = this.#items, mask = this.#mask;
    let at = this.#head + this.#size;
    for (let i = 0; i < n; i++) slots[(at++) & mask] = items[i];
    this.#size += n;
  }

  /** The oldest item, left in place. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[this.#head];
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const items = this.#items;
    const item = items[this.#head];
    items[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    if (--this.#size === 0) {
      this.#head = 0;
      if (items.length > KEEP) this.#reset();
    }
    return item;
  }

  /** What the queue holds, oldest first (a copy). */
  items(): T[] {
    const out = new Array<T>(this.#size);
    for (let i = 0; i < this.#size; i++) out[i] = this.#items[(this.#head + i) & this.#mask] as T;
    return out;
  }

  /** Removes the items `drop` says to (a rare path: it copies the queue); returns them, oldest first. */
  removeIf(drop: (item: T) => boolean): T[] {
    const removed: T[] = [];
    const all = this.items();
    if (!all.some(drop)) return removed;
    this.#reset();
    for (const item of all) {
      if (drop(item)) removed.push(item);
      else this.push(item);
    }
    return removed;
  }

  /** Empties the queue; returns what it held, oldest first. */
  clear(): T[] {
    const rest = this.items();
    this.#reset();
    return rest;
  }

  #reset(): void {
    this.#items = new Array<T | undefined>(8).fill(undefined);
    this.#mask = 7;
    this.#head = 0;
    this.#size = 0;
  }

  /** A ring of at least `need` slots (and twice the present one), the items first. */
  #grow(need = 0): void {
    const old = this.#items, mask = this.#mask, head = this.#head;
    let n = old.length * 2;
    while (n < need) n *= 2;
    const items = new Array<T | undefined>(n).fill(undefined);
    for (let i = 0; i < this.#size; i++) items[i] = old[(head + i) & mask];
    this.#items = items;
    this.#mask = n - 1;
    this.#head = 0;
  }
}
