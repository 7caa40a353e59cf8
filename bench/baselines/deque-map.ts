/**
 * Baseline: a delivery-order queue (a plain array of offsets) plus a Map
 * offset → state; a completion marks its entry, then completed entries are popped
 * from the front of the queue. Correct across offset gaps (it only waits for
 * delivered offsets), but every record costs a Map entry and a queue slot.
 *
 * The queue is popped by moving a head index and compacted now and then, as a careful
 * hand-written version would (`Array#shift` on a large array copies).
 *
 * @module
 */
import type { Subject } from "../subject.ts";

const PENDING = 0;
const DONE = 1;

/** A queue + Map tracker (see the module doc). */
export class DequeMap implements Subject {
  readonly keys = "offset" as const;
  #queue: number[] = [];
  #head = 0;
  #state = new Map<number, number>();
  #next = -1; // the last batch's next position

  register(batch: Float64Array, next: number): number {
    const queue = this.#queue, state = this.#state;
    for (let i = 0; i < batch.length; i++) {
      const o = batch[i];
      queue.push(o);
      state.set(o, PENDING);
    }
    this.#next = next;
    return batch.length > 0 ? batch[0] : -1;
  }

  complete(o: number): void {
    const state = this.#state;
    if (state.get(o) !== PENDING) return; // unknown, behind the front, or a duplicate
    state.set(o, DONE);
    const queue = this.#queue;
    let head = this.#head;
    if (queue[head] !== o) return;
    while (head < queue.length && state.get(queue[head]) === DONE) {
      state.delete(queue[head]);
      head++;
    }
    if (head > 4096 && head * 2 > queue.length) {
      this.#queue = queue.slice(head);
      head = 0;
    }
    this.#head = head;
  }

  completeMany(keys: Float64Array): void {
    for (let i = 0; i < keys.length; i++) this.complete(keys[i]);
  }

  completeOffset(offset: number): void {
    this.complete(offset);
  }

  position(): number {
    return this.#head < this.#queue.length ? this.#queue[this.#head] : this.#next;
  }

  held(): number {
    return this.#queue.length - this.#head;
  }

  bytes(): undefined {
    return undefined;
  }

  dispose(): void {
    this.#queue = [];
    this.#head = 0;
    this.#state = new Map();
  }
}
