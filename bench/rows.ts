/**
 * The rows of every table: the tracker on each engine (per-call or batched
 * completions) and the three hand-written baselines, all behind {@link Subject}.
 *
 * @module
 */
import { type Completion, Tracker } from "../core/mod.ts";
import { DequeMap } from "./baselines/deque-map.ts";
import { SetWatermark } from "./baselines/set-watermark.ts";
import { SortedMap } from "./baselines/sorted-map.ts";
import type { Subject } from "./subject.ts";

/** Row names, in table order. */
export const ROWS = ["js", "wasm", "wasm-batch", "set-watermark", "deque-map", "sorted-map"] as const;
/** One row name. */
export type Row = (typeof ROWS)[number];

/** The tracker façade behind the bench interface (`complete` per call; `completeMany` per call too unless batched). */
export class TrackerSubject implements Subject {
  readonly keys = "handle" as const;
  readonly tracker: Tracker;
  readonly #batched: boolean;

  constructor(engine: "js" | "wasm", batched: boolean, capacity = 1 << 26) {
    this.tracker = new Tracker({ engine, start: 0, capacity });
    this.#batched = batched;
  }

  register(batch: Float64Array, next: number): number {
    return this.tracker.register(batch, next);
  }

  complete(key: number): Completion {
    return this.tracker.complete(key);
  }

  completeMany(keys: Float64Array): void {
    if (this.#batched) {
      this.tracker.completeMany(keys);
      return;
    }
    const t = this.tracker;
    for (let i = 0; i < keys.length; i++) t.complete(keys[i]);
  }

  completeOffset(offset: number): Completion {
    return this.tracker.completeOffset(offset);
  }

  safe(): number {
    return this.tracker.safe ?? -1;
  }

  held(): number {
    return this.tracker.stats().retained;
  }

  bytes(): number {
    return this.tracker.stats().bytes;
  }
}

/** Makes a fresh subject of a row. */
export function subjectFactory(row: Row): () => Subject {
  switch (row) {
    case "js":
      return () => new TrackerSubject("js", false);
    case "wasm":
      return () => new TrackerSubject("wasm", false);
    case "wasm-batch":
      return () => new TrackerSubject("wasm", true);
    case "set-watermark":
      return () => new SetWatermark();
    case "deque-map":
      return () => new DequeMap();
    case "sorted-map":
      return () => new SortedMap();
  }
}
