/**
 * Baseline: the watermark most people write first — a Set of completed offsets and a
 * `next` counter advanced by one while the Set holds it:
 *
 *     done.add(o); while (done.has(next)) { done.delete(next); next++ }
 *
 * It assumes every integer offset is delivered, so it cannot cross an offset gap
 * (compacted topics, transaction markers): `next` stops at the first missing offset
 * and every later completion piles up in the Set. It never hangs — the loop ends at
 * the first offset not in the Set — and {@link SetWatermark.stalled} reports the stop.
 *
 * @module
 */
import type { Subject } from "../subject.ts";

/** A Set-based watermark (see the module doc). */
export class SetWatermark implements Subject {
  readonly keys = "offset" as const;
  #done = new Set<number>();
  #next = -1; // the watermark: every offset below it is complete (as far as it knows)
  #end = -1; // last registered offset + 1

  register(batch: Float64Array, _next: number): number {
    // The naive watermark has nothing to do per record: it only learns where it starts.
    if (batch.length === 0) return -1;
    if (this.#next < 0) this.#next = batch[0];
    this.#end = batch[batch.length - 1] + 1;
    return batch[0];
  }

  complete(o: number): void {
    if (o < this.#next) return; // behind the watermark: a duplicate
    const done = this.#done;
    done.add(o);
    let next = this.#next;
    while (done.has(next)) {
      done.delete(next);
      next++;
    }
    this.#next = next;
  }

  completeMany(keys: Float64Array): void {
    for (let i = 0; i < keys.length; i++) this.complete(keys[i]);
  }

  completeOffset(offset: number): void {
    this.complete(offset);
  }

  position(): number {
    return this.#next;
  }

  held(): number {
    return this.#done.size;
  }

  /** True when completed records are held but the watermark stopped short of the end. */
  stalled(): boolean {
    return this.#done.size > 0 && this.#next < this.#end;
  }

  bytes(): undefined {
    return undefined;
  }

  dispose(): void {
    this.#done = new Set();
  }
}
