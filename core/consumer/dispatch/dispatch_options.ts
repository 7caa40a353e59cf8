/**
 * The dispatcher's options: the ordering modes, the worker-pool size and the per-partition
 * and total bounds, validated once with their defaults.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../errors.ts";

/**
 * `partition`: one record at a time per partition, in offset order. `key`: at most
 * one in-flight record per key (within a partition), in offset order within the key;
 * records without a key are not ordered. `unordered`: any record may run.
 */
export type Ordering = "partition" | "key" | "unordered";

/** Sizes and bounds of a `Dispatcher`. */
export interface DispatchOptions {
  /** Default `"key"`. */
  ordering?: Ordering;
  /** Handler calls running at once over all partitions. Default 16. */
  concurrency?: number;
  /** Records of one partition in flight at once (running or waiting to retry). Default `concurrency`; 1 under `partition` ordering. */
  maxInFlightPerPartition?: number;
  /** A partition retaining this many entries (pending plus completed-but-blocked) is paused. Default 10,000. */
  highWaterMark?: number;
  /** A paused partition resumes once it retains at most this many. Default `highWaterMark / 2`. */
  lowWaterMark?: number;
  /** Every partition is paused while all of them together retain this many; resumed at half. Default `4 × highWaterMark`. */
  maxBuffered?: number;
}

/** Validated {@link DispatchOptions}. */
export type ResolvedDispatchOptions = Required<DispatchOptions>;

/**
 * Validates dispatch options and fills in the defaults.
 * @throws {InvalidArgumentError} for a bad ordering or a bound that is not a positive integer (or a low mark above the high mark)
 */
export function resolveDispatchOptions(o: DispatchOptions = {}): ResolvedDispatchOptions {
  const given = o.ordering ?? "key";
  if (given !== "partition" && given !== "key" && given !== "unordered") {
    throw new InvalidArgumentError(`ordering must be "partition", "key" or "unordered"; got ${describe(given)}`);
  }
  // The literal, not the string given (one read from a file or an argument is not interned):
  // the hot paths compare the ordering, and a comparison of two interned strings is one of pointers.
  const ordering: Ordering = given === "key" ? "key" : given === "partition" ? "partition" : "unordered";
  const int = (name: string, v: unknown, min: number): number => {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) {
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}; got ${describe(v)}`);
    }
    return v;
  };
  const concurrency = int("concurrency", o.concurrency ?? 16, 1);
  const maxInFlightPerPartition = ordering === "partition"
    ? 1
    : int("maxInFlightPerPartition", o.maxInFlightPerPartition ?? concurrency, 1);
  const highWaterMark = int("highWaterMark", o.highWaterMark ?? 10_000, 1);
  const lowWaterMark = int("lowWaterMark", o.lowWaterMark ?? Math.floor(highWaterMark / 2), 0);
  if (lowWaterMark >= highWaterMark) {
    throw new InvalidArgumentError(`lowWaterMark (${lowWaterMark}) must be below highWaterMark (${highWaterMark})`);
  }
  const maxBuffered = int("maxBuffered", o.maxBuffered ?? 4 * highWaterMark, 1);
  return { ordering, concurrency, maxInFlightPerPartition, highWaterMark, lowWaterMark, maxBuffered };
}
