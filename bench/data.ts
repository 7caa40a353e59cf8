/**
 * Inputs of the scenarios, made before any subject exists (so they are outside both the
 * timings and the heap measurements): offsets (dense, with transaction-marker gaps, or
 * compacted), their batches, and completion orders as record indices.
 *
 * @module
 */
import { Rng } from "./measure.ts";

/** First offset of every feed: a partition that has been running for a while. */
export const BASE = 1_000_000;
/** Records per registered batch (a typical fetch). */
export const BATCH = 500;

/** Delivered records of one partition, cut into batches. */
export interface Feed {
  /** Offsets of all records, strictly increasing. */
  offsets: Float64Array;
  /** Views of `offsets`, one per batch of {@link BATCH}. */
  batches: Float64Array[];
  /** Each batch's next position (the next batch's first offset; past the last marker for the final one). */
  nexts: number[];
  /** The final batch's next position: where the safe position must end. */
  end: number;
}

/** Offset layouts. */
export type Layout = "dense" | "txn" | "compacted";

/**
 * Makes `n` offsets:
 * - `dense`: consecutive;
 * - `txn`: transactions of 1–100 records, each followed by 1–2 offsets of control
 *   markers (commit/abort) that are never delivered;
 * - `compacted`: every record followed by a random gap of 0–1,000,000 offsets, as in a
 *   compacted topic (worst case: every record is its own run).
 */
export function feed(n: number, layout: Layout, seed = 42): Feed {
  const rng = new Rng(seed);
  const offsets = new Float64Array(n);
  let o = BASE;
  let txnLeft = 1 + rng.int(100);
  let after = 0; // gap after the last record
  for (let i = 0; i < n; i++) {
    offsets[i] = o;
    after = 0;
    if (layout === "txn" && --txnLeft === 0) {
      after = 1 + rng.int(2);
      txnLeft = 1 + rng.int(100);
    } else if (layout === "compacted") {
      after = rng.int(1_000_001);
    }
    o += 1 + after;
  }
  const batches: Float64Array[] = [];
  const nexts: number[] = [];
  for (let b = 0; b < n; b += BATCH) {
    const e = Math.min(n, b + BATCH);
    batches.push(offsets.subarray(b, e));
    nexts.push(e < n ? offsets[e] : o);
  }
  return { offsets, batches, nexts, end: o };
}
