/**
 * A FIFO with O(1) push and shift: the dispatcher's per-lane queues.
 *
 * @module
 */

/** A FIFO with O(1) push and shift. */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  /** Items queued. */
  get length(): number {
    return this.#items.length - this.#head;
  }

  /** Appends an item. */
  push(item: T): void {
    this.#items.push(item);
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Empties the queue; returns what it held, oldest first. */
  clear(): T[] {
    const rest = this.#items.slice(this.#head) as T[];
    this.#items = [];
    this.#head = 0;
    return rest;
  }
}
