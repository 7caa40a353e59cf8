/**
 * The rows of every table: the tracker on each engine (per-call or batched
 * completions) and the three hand-written baselines, all behind {@link Subject}.
 *
 * @module
 */
import { Tracker } from "../core/mod.ts";
import { DequeMap } from "./baselines/deque-map.ts";
import { SetWatermark } from "./baselines/set-watermark.ts";
import { SortedMap } from "./baselines/sorted-map.ts";
import type { Subject } from "./subject.ts";

/** Row names, in table order. */
export const ROWS = ["js", "wasm", "wasm-batch", "set-watermark", "deque-map", "sorted-map"] as const;
/** One row name. */
export type Row = (typeof ROWS)[number];

/**
 * The tracker row: the library's own `Tracker`, so the scenario loops call exactly the
 * methods a user calls (`register`, `complete`, `completeMany`, `completeOffset`), with
 * no wrapper in between; only the bench-side readings are added. `completeMany` is the
 * tracker's batched call (the `wasm-batch` row).
 */
export class TrackerSubject extends Tracker implements Subject {
  readonly keys = "handle" as const;

  constructor(engine: "js" | "wasm", capacity = 1 << 26) {
    super({ engine, start: 0, capacity });
  }

  position(): number {
    return this.safe ?? -1;
  }

  held(): number {
    return this.stats().retained;
  }

  bytes(): number {
    return this.stats().bytes;
  }

  dispose(): void {
    this.revoke();
  }
}

/** The per-call rows (`js`, `wasm`): a chunk of completions is a loop of `complete` calls. */
export class PerCallTrackerSubject extends TrackerSubject {
  override completeMany(keys: ArrayLike<number>): number {
    let added = 0;
    for (let i = 0; i < keys.length; i++) if (this.complete(keys[i]) >= 2) added++;
    return added;
  }
}

/** Makes a fresh subject of a row. */
export function subjectFactory(row: Row): () => Subject {
  switch (row) {
    case "js":
      return () => new PerCallTrackerSubject("js");
    case "wasm":
      return () => new PerCallTrackerSubject("wasm");
    case "wasm-batch":
      return () => new TrackerSubject("wasm");
    case "set-watermark":
      return () => new SetWatermark();
    case "deque-map":
      return () => new DequeMap();
    case "sorted-map":
      return () => new SortedMap();
  }
}
