/**
 * Baseline: a sorted set of the *incomplete* offsets with O(log n) insert, delete
 * and min, as Confluent Parallel Consumer keeps per partition (a skip list). Here a
 * plain skip list (p = 1/4, like Java's `ConcurrentSkipListMap`): registering inserts
 * each offset, completing deletes it, and the safe position is the smallest offset
 * left (or the last batch's next when none is left). Completed records cost nothing
 * while blocked; every pending record costs a node.
 *
 * @module
 */
import type { Subject } from "../subject.ts";

const MAX_LEVEL = 16; // 4^16 > 2^32 entries

class SkipNode {
  readonly key: number;
  readonly next: (SkipNode | null)[];
  constructor(key: number, level: number) {
    this.key = key;
    this.next = new Array<SkipNode | null>(level).fill(null);
  }
}

/** A skip list of numbers: insert, delete, min in O(log n) expected. */
export class SkipList {
  readonly #head = new SkipNode(-Infinity, MAX_LEVEL);
  readonly #update = new Array<SkipNode>(MAX_LEVEL);
  #level = 1;
  #size = 0;
  #rng = 0x9e3779b9; // xorshift32: a fixed seed keeps runs reproducible

  /** How many keys are held. */
  get size(): number {
    return this.#size;
  }

  /** The smallest key, or `undefined` when empty. */
  min(): number | undefined {
    return this.#head.next[0]?.key;
  }

  /** Inserts `key`; returns false when it was present already. */
  insert(key: number): boolean {
    const update = this.#update;
    let x = this.#head;
    for (let l = this.#level - 1; l >= 0; l--) {
      let n = x.next[l];
      while (n !== null && n.key < key) {
        x = n;
        n = x.next[l];
      }
      update[l] = x;
    }
    const at = x.next[0];
    if (at !== null && at.key === key) return false;
    const level = this.#randomLevel();
    for (let l = this.#level; l < level; l++) update[l] = this.#head;
    if (level > this.#level) this.#level = level;
    const node = new SkipNode(key, level);
    for (let l = 0; l < level; l++) {
      node.next[l] = update[l].next[l];
      update[l].next[l] = node;
    }
    this.#size++;
    return true;
  }

  /** Deletes `key`; returns false when it was not present. */
  delete(key: number): boolean {
    const update = this.#update;
    let x = this.#head;
    for (let l = this.#level - 1; l >= 0; l--) {
      let n = x.next[l];
      while (n !== null && n.key < key) {
        x = n;
        n = x.next[l];
      }
      update[l] = x;
    }
    const node = x.next[0];
    if (node === null || node.key !== key) return false;
    for (let l = 0; l < node.next.length; l++) update[l].next[l] = node.next[l];
    while (this.#level > 1 && this.#head.next[this.#level - 1] === null) this.#level--;
    this.#size--;
    return true;
  }

  /** Level ≥ 1 with P(level > k) = 4^-k. */
  #randomLevel(): number {
    let r = this.#rng;
    r ^= r << 13;
    r ^= r >>> 17;
    r ^= r << 5;
    this.#rng = r;
    let level = 1;
    while ((r & 3) === 0 && level < MAX_LEVEL) {
      level++;
      r >>>= 2;
    }
    return level;
  }
}

/** The skip-list tracker (see the module doc). */
export class SortedMap implements Subject {
  readonly keys = "offset" as const;
  #incomplete = new SkipList();
  #next = -1; // the last batch's next position

  register(batch: Float64Array, next: number): number {
    const list = this.#incomplete;
    for (let i = 0; i < batch.length; i++) list.insert(batch[i]);
    this.#next = next;
    return batch.length > 0 ? batch[0] : -1;
  }

  complete(o: number): void {
    this.#incomplete.delete(o);
  }

  completeMany(keys: Float64Array): void {
    for (let i = 0; i < keys.length; i++) this.complete(keys[i]);
  }

  completeOffset(offset: number): void {
    this.complete(offset);
  }

  position(): number {
    return this.#incomplete.min() ?? this.#next;
  }

  held(): number {
    return this.#incomplete.size;
  }

  bytes(): undefined {
    return undefined;
  }

  dispose(): void {
    this.#incomplete = new SkipList();
  }
}
