/**
 * Backpressure over a dispatcher's lanes: a lane whose retained entries reach the high
 * mark, or every active lane while the total reaches `maxBuffered`, is paused at the
 * client; it is resumed at or below the low mark (and the total at or below half of
 * `maxBuffered`). Paused time is counted per lane.
 *
 * @module
 */
import type { ResolvedDispatchOptions } from "./dispatch_options.ts";
import type { Lane } from "./lane.ts";

/** What backpressure calls back. */
export interface BackpressureHooks<M> {
  /** Pause fetching the lane's partition. */
  pause(lane: Lane<M>, reason: "high-water-mark" | "max-buffered"): void;
  /** Resume fetching the lane's partition. */
  resume(lane: Lane<M>): void;
}

/** The pause and resume decisions of one dispatcher. */
export class Backpressure<M> {
  readonly #options: ResolvedDispatchOptions;
  readonly #lanes: () => readonly Lane<M>[];
  readonly #hooks: BackpressureHooks<M>;
  #retained = 0;
  #totalPaused = false;

  /**
   * Backpressure over the lanes `lanes()` returns.
   * @param options the marks and `maxBuffered`
   * @param lanes the dispatcher's lanes
   * @param hooks how to pause or resume a partition
   */
  constructor(options: ResolvedDispatchOptions, lanes: () => readonly Lane<M>[], hooks: BackpressureHooks<M>) {
    this.#options = options;
    this.#lanes = lanes;
    this.#hooks = hooks;
  }

  /** Retained entries over all lanes (as last read). */
  get retained(): number {
    return this.#retained;
  }

  /** A lane left: its entries no longer count, and its pause ends. */
  removed(lane: Lane<M>): void {
    this.#retained -= lane.retained;
    lane.retained = 0;
    if (lane.paused) {
      lane.pausedMs += Date.now() - lane.pausedAt;
      lane.paused = false;
    }
  }

  /**
   * Records the lane's retained entries (read from its tracker) and pauses or resumes
   * it. Call after registering a batch and after completions that advanced the safe
   * position of a paused lane (or while the total bound holds everything paused).
   */
  setRetained(lane: Lane<M>, retained: number): void {
    if (lane.ended) return;
    this.#retained += retained - lane.retained;
    lane.retained = retained;
    const o = this.#options;
    if (!lane.paused) {
      if (lane.state === "active" && retained >= o.highWaterMark) this.#pause(lane, "high-water-mark");
    } else if (lane.state === "active" && retained <= o.lowWaterMark && !this.#totalPaused) {
      this.#resume(lane);
    }
    this.checkTotal();
  }

  /** Whether the lane's retained count should be re-read after a completion that advanced. */
  wantsRetained(lane: Lane<M>): boolean {
    return lane.paused || this.#totalPaused;
  }

  /** Pauses a lane outside backpressure (stopped partitions); it is not resumed by the marks. */
  markPaused(lane: Lane<M>): void {
    if (lane.paused) return;
    lane.paused = true;
    lane.pausedAt = Date.now();
  }

  /** Pauses every active lane while the total reaches `maxBuffered`; resumes them at half of it. */
  checkTotal(): void {
    const o = this.#options;
    if (!this.#totalPaused && this.#retained >= o.maxBuffered) {
      this.#totalPaused = true;
      for (const lane of this.#lanes()) if (!lane.paused && lane.state === "active") this.#pause(lane, "max-buffered");
    } else if (this.#totalPaused && this.#retained <= Math.floor(o.maxBuffered / 2)) {
      this.#totalPaused = false;
      for (const lane of this.#lanes()) {
        if (lane.paused && lane.state === "active" && lane.retained <= o.lowWaterMark) this.#resume(lane);
      }
    }
  }

  #pause(lane: Lane<M>, reason: "high-water-mark" | "max-buffered"): void {
    lane.paused = true;
    lane.pausedAt = Date.now();
    this.#hooks.pause(lane, reason);
  }

  #resume(lane: Lane<M>): void {
    lane.pausedMs += Date.now() - lane.pausedAt;
    lane.paused = false;
    this.#hooks.resume(lane);
  }
}
