/**
 * The stall guard: holds dispatching while commits do not land. Records that finished
 * but cannot be committed are work a restart redoes; past `commit.stallMs` without an
 * acknowledgement (or at once after a refused commit, or when the client reports the
 * cluster out of reach) no new record starts until a commit is acknowledged again.
 *
 * @module
 */
import type { Dispatcher } from "./dispatcher.ts";
import type { ConsumerLife } from "./lifecycle.ts";
import type { EventHub } from "./metrics.ts";

/** What a {@link StallGuard} reads and drives. */
export interface StallInputs {
  /** Its `held` flag is the hold; a release pumps it. */
  readonly dispatcher: Pick<Dispatcher<unknown>, "held" | "pump">;
  /** Emits `stall`. */
  readonly events: EventHub;
  /** Only a live consumer holds. */
  readonly life: ConsumerLife;
  /** Records finished so far (completed plus skipped). */
  readonly finished: () => number;
}

/** Holds dispatching while no commit was acknowledged for `stallMs` although records finished. */
export class StallGuard {
  readonly #stallMs: number;
  readonly #in: StallInputs;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastAckAt = 0; // Date.now() of the last acknowledged commit (or the start)
  #finishedAtAck = 0; // inputs.finished() then
  #seq = 0; // counts assignments: a failure of an earlier one's commit holds nothing
  #refused = false; // a commit was refused since the last acknowledgement
  #unreachable = false; // the cluster was reported out of reach and has not answered since

  /**
   * A guard, not started yet.
   * @param stallMs how long finished records may wait for an acknowledgement (Infinity: never hold)
   * @param inputs what it reads and drives
   */
  constructor(stallMs: number, inputs: StallInputs) {
    this.#stallMs = stallMs;
    this.#in = inputs;
  }

  /** The current assignment's number: pass it to {@link refused} for a commit sent now. */
  get seq(): number {
    return this.#seq;
  }

  /** The consumer starts: the clock begins, and the periodic check unless `stallMs` is Infinity. */
  start(): void {
    this.#lastAckAt = Date.now();
    if (this.#stallMs !== Infinity) {
      this.#timer = setInterval(() => this.check(), Math.max(50, Math.min(1_000, this.#stallMs / 4)));
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** Ends the periodic check. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** A commit sent in assignment `seq` was refused: if that is still the current one, hold at once (until an acknowledgement) when records finished since the last one. */
  refused(seq: number): void {
    if (seq !== this.#seq || this.#stallMs === Infinity) return; // Infinity: the user asked never to hold
    this.#refused = true;
    this.check();
  }

  /**
   * The client reported the cluster out of reach: nothing that finishes now can be
   * committed until it answers, so hold at once (when records finished since the last
   * acknowledgement), until a commit is acknowledged or the cluster answers ({@link reachable}).
   */
  unreachable(): void {
    if (this.#stallMs === Infinity) return;
    this.#unreachable = true;
    this.check();
  }

  /**
   * The cluster answered again: the hold an outage report set ends (a refused commit's or
   * `stallMs`'s stays). It must: a hold that only an acknowledgement ends never ends when
   * nothing is left to commit (records of a revoked lane finished after the revoke).
   */
  reachable(): void {
    if (!this.#unreachable) return;
    this.#unreachable = false;
    this.check();
  }

  /** A commit was acknowledged: the clock restarts, and a hold ends. */
  acknowledged(): void {
    this.#lastAckAt = Date.now();
    this.#finishedAtAck = this.#in.finished();
    this.#refused = false;
    this.#unreachable = false;
    if (this.#in.dispatcher.held) this.check();
  }

  /** A new (eager) assignment starts with nothing at risk: what the old one finished is committed or gone. */
  newAssignment(): void {
    this.#seq++;
    this.#lastAckAt = Date.now();
    this.#finishedAtAck = this.#in.finished();
    this.#refused = false;
    this.#unreachable = false;
    this.#setHeld(false);
  }

  /** Holds dispatching while no commit was acknowledged for `stallMs` although records finished; releases after an acknowledgement. */
  check(): void {
    const stalled = this.#in.life.live && this.#in.finished() > this.#finishedAtAck &&
      (this.#refused || this.#unreachable || Date.now() - this.#lastAckAt > this.#stallMs);
    this.#setHeld(stalled);
  }

  #setHeld(stalled: boolean): void {
    const d = this.#in.dispatcher;
    if (stalled === d.held) return;
    d.held = stalled;
    if (this.#in.events.has("stall")) {
      this.#in.events.emit("stall", { stalled, sinceMs: Date.now() - this.#lastAckAt });
    }
    if (!stalled) d.pump();
  }
}
