/**
 * The stall guard: holds dispatching while commits do not land. Records that finished
 * but cannot be committed are work a restart redoes; past `commit.stallMs` without an
 * acknowledgement (or at once after a refused commit, or when the client reports the
 * cluster out of reach) no new record starts until a commit is acknowledged again.
 *
 * A count bound beside the time bound (`commit.maxUncommitted`): once the commit
 * acknowledgements are late — none for {@link lateAfterMs} (four times the usual round
 * trip, the fastest recent one, at least {@link LATE_FLOOR_MS}) — no new record starts while more than
 * `maxUncommitted` records finished since the last acknowledgement. A fast consumer
 * finishes thousands of records within `stallMs`; an outage that neither refuses the
 * commit in flight nor is reported yet (a broker killed under a commit, the client still
 * retrying) would leave all of them to be redone by whoever exits or is killed meanwhile.
 * Healthy commits are never late, so the count costs nothing then.
 *
 * @module
 */
import type { Dispatcher } from "../dispatch/mod.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { EventHub } from "../port/mod.ts";

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
  /** Records whose handler ran to completion so far (what a redo would run again; default {@link finished}). */
  readonly ran?: () => number;
}

/** Acknowledgements count as late after at least this long (and four usual round trips). */
export const LATE_FLOOR_MS = 100;

/** The usual round trip is the fastest of this many recent acknowledged commits. */
const LATENCY_WINDOW = 16;

/** Holds dispatching while no commit was acknowledged for `stallMs` although records finished. */
export class StallGuard {
  readonly #stallMs: number;
  readonly #maxUncommitted: number;
  readonly #gapMs: number;
  readonly #in: StallInputs;
  readonly #latencies: number[] = []; // the last LATENCY_WINDOW acknowledged commits' latencies
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastAckAt = 0; // Date.now() of the last acknowledged commit (or the start)
  #finishedAtAck = 0; // inputs.finished() then
  #ranAtAck = 0; // inputs.ran() then
  #seq = 0; // counts assignments: a failure of an earlier one's commit holds nothing
  #refused = false; // a commit was refused since the last acknowledgement
  #unreachable = false; // the cluster was reported out of reach and has not answered since

  /**
   * A guard, not started yet.
   * @param stallMs how long finished records may wait for an acknowledgement (Infinity: never hold)
   * @param inputs what it reads and drives
   * @param maxUncommitted records that may finish beyond the last acknowledgement once acknowledgements are late (Infinity: no count bound)
   * @param gapMs the usual time between two commits beyond their round trip (interval mode: the interval; eager: 0)
   */
  constructor(stallMs: number, inputs: StallInputs, maxUncommitted = Infinity, gapMs = 0) {
    this.#stallMs = stallMs;
    this.#maxUncommitted = maxUncommitted;
    this.#gapMs = gapMs;
    this.#in = inputs;
  }

  /**
   * How long without an acknowledgement counts as late: the usual gap between commits
   * plus four times the usual round trip, at least {@link LATE_FLOOR_MS}, at most
   * `stallMs`. The usual round trip is the fastest of the last 16 acknowledged commits, not
   * an average: commits that slow down (a broker about to fail, a loaded machine) make
   * acknowledgements late, rather than moving what counts as late along with them. Before
   * 16 acknowledgements, only the floor counts.
   */
  get lateAfterMs(): number {
    // Until LATENCY_WINDOW acknowledgements came, only the floor: a member's first commits
    // (after a join, the claims read, a backlog) are often its slowest, and one of them
    // alone must not set what counts as late.
    const usual = this.#latencies.length < LATENCY_WINDOW ? 0 : Math.min(...this.#latencies);
    return Math.min(this.#stallMs, Math.max(LATE_FLOOR_MS, this.#gapMs + 4 * usual));
  }

  /** Whether the cluster was reported out of reach and has not answered since (a commit now would fail too). */
  get outage(): boolean {
    return this.#unreachable;
  }

  /** The current assignment's number: pass it to {@link refused} for a commit sent now. */
  get seq(): number {
    return this.#seq;
  }

  /** The consumer starts: the clock begins, and the periodic check unless `stallMs` is Infinity. */
  start(): void {
    this.#lastAckAt = Date.now();
    if (this.#stallMs !== Infinity) {
      // The count bound is checked often: at thousands of records a second, a check every
      // 250 ms would let hundreds more finish past it.
      const every = this.#maxUncommitted === Infinity ? Math.max(50, Math.min(1_000, this.#stallMs / 4)) : 20;
      this.#timer = setInterval(() => this.check(), every);
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

  /**
   * A commit was acknowledged: the clock restarts, and a hold ends.
   * @param latencyMs its round trip (one of the recent ones {@link lateAfterMs} reads)
   */
  acknowledged(latencyMs?: number): void {
    if (latencyMs !== undefined && Number.isFinite(latencyMs) && latencyMs >= 0) {
      this.#latencies.push(latencyMs);
      if (this.#latencies.length > LATENCY_WINDOW) this.#latencies.shift();
    }
    this.#lastAckAt = Date.now();
    this.#finishedAtAck = this.#in.finished();
    this.#ranAtAck = this.#ran();
    this.#refused = false;
    this.#unreachable = false;
    if (this.#in.dispatcher.held) this.check();
  }

  /** A new (eager) assignment starts with nothing at risk: what the old one finished is committed or gone. */
  newAssignment(): void {
    this.#seq++;
    this.#lastAckAt = Date.now();
    this.#finishedAtAck = this.#in.finished();
    this.#ranAtAck = this.#ran();
    this.#refused = false;
    this.#unreachable = false;
    this.#setHeld(false);
  }

  /**
   * Holds dispatching while no commit was acknowledged for `stallMs` although records
   * finished, or while acknowledgements are late and more than `maxUncommitted` records
   * finished since the last one; releases after an acknowledgement.
   */
  check(): void {
    const sinceAck = Date.now() - this.#lastAckAt;
    // A shutdown's drain is held too: what it would start while commits do not land could
    // not be committed either (the final commit fails as the others did) and is redone.
    const life = this.#in.life;
    const guarded = life.live || life.state === "stopping";
    const stalled = guarded && this.#in.finished() > this.#finishedAtAck &&
      (this.#refused || this.#unreachable || sinceAck > this.#stallMs ||
        (this.#ran() - this.#ranAtAck > this.#maxUncommitted && sinceAck > this.lateAfterMs));
    this.#setHeld(stalled);
  }

  #ran(): number {
    return (this.#in.ran ?? this.#in.finished)();
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
