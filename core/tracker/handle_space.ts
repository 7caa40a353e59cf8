/**
 * The handle space: which slice of the numbers each tracker issues its handles from, so
 * that a handle one tracker issued is never accepted by another — in particular not by
 * the tracker of a later assignment of the same partition that happens to reuse a slice.
 *
 * A handle is `base + seq` (seq counts the tracker's registered records from 0). The
 * space is cut into slices of 2^32 numbers, slice `tag` = `[tag × 2^32, (tag + 1) × 2^32)`,
 * tags 1 … 2^20 − 1 (every handle is at least 2^32 and below 2^52). A slice is held by one
 * live tracker at a time. When its tracker is revoked (or garbage collected unrevoked), the
 * slice remembers its *floor*: the end of every handle issued from it so far. The next
 * tracker on that slice starts at the floor, so every handle of an earlier holder is below
 * its base, and an engine rejects a handle below its base (its `seq` would be negative).
 * A slice whose floor passed 2^30 is retired; a tracker therefore always has at least
 * 2^32 − 2^30 = 3 × 2^30 handles inside its slice. The hot path (`complete`) is untouched:
 * the whole guarantee lives in the bases handed out here.
 *
 * @module
 */
import { HandleSpaceError } from "../errors.ts";

/** Width of one slice: 2^32 handles. */
export const SLICE = 4_294_967_296;
/** Slices (tags) 1 … 2^20 − 1. */
export const SLICES = 1_048_575;
/** A slice whose floor is above this is retired: every holder keeps ≥ 2^32 − 2^30 handles of room. */
export const REUSE_LIMIT = 1_073_741_824;

/** One tracker's hold on a slice. */
export interface Lease {
  /** The slice. */
  readonly tag: number;
  /** The tracker's first handle: `tag × 2^32 + floor`. */
  readonly base: number;
  /** The next handle the tracker would issue; its owner moves it forward at every registration. */
  end: number;
  /** Whether the lease was given back. */
  released: boolean;
}

/**
 * Hands out handle bases and takes them back. Slices given back are reused first
 * (oldest first), so the bookkeeping stays proportional to the trackers recently
 * revoked; fresh slices are used when none is free.
 */
export class HandleSpace {
  readonly #slices: number;
  readonly #reuseLimit: number;
  #fresh = 1; // next slice never used
  #freeTags: number[] = [];
  #freeFloors: number[] = [];
  #freeHead = 0;

  /**
   * @param slices how many slices (tags 1 … slices); default 2^20 − 1
   * @param reuseLimit highest floor at which a slice is still reused; default 2^30
   */
  constructor(slices: number = SLICES, reuseLimit: number = REUSE_LIMIT) {
    this.#slices = slices;
    this.#reuseLimit = reuseLimit;
  }

  /** How many slices a new tracker could get now (fresh ones plus those given back and not retired). */
  get available(): number {
    return this.#slices + 1 - this.#fresh + this.#freeTags.length - this.#freeHead;
  }

  /**
   * A base for a new tracker.
   * @throws {HandleSpaceError} when every slice is held by a live tracker or retired
   */
  acquire(): Lease {
    let tag: number, floor: number;
    if (this.#freeHead < this.#freeTags.length) {
      tag = this.#freeTags[this.#freeHead];
      floor = this.#freeFloors[this.#freeHead];
      this.#freeHead++;
      if (this.#freeHead > 1024 && this.#freeHead * 2 > this.#freeTags.length) {
        this.#freeTags = this.#freeTags.slice(this.#freeHead);
        this.#freeFloors = this.#freeFloors.slice(this.#freeHead);
        this.#freeHead = 0;
      }
    } else if (this.#fresh <= this.#slices) {
      tag = this.#fresh++;
      floor = 0;
    } else {
      throw new HandleSpaceError(
        `no handle slice is free: all ${this.#slices} are held by live trackers or used up ` +
          `(more than ${this.#reuseLimit} handles issued from each); revoke trackers that are no longer used`,
      );
    }
    const base = tag * SLICE + floor;
    return { tag, base, end: base, released: false };
  }

  /**
   * Gives a slice back: later holders start at the lease's `end`, above every handle it
   * issued. Idempotent.
   */
  release(lease: Lease): void {
    if (lease.released) return;
    lease.released = true;
    const floor = lease.end - lease.tag * SLICE;
    if (floor > this.#reuseLimit) return; // retired: too little room left for the next holder
    this.#freeTags.push(lease.tag);
    this.#freeFloors.push(floor);
  }
}
