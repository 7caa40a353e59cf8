/**
 * The runner's exactly-once hooks (the `transactional` option): each commit cycle commits,
 * per partition, one transaction with the outputs of exactly the records it calls finished
 * plus the offset and completed set; a failed transaction starts its partition over; new
 * lanes are held until their producers are open (fenced) and their committed offsets read.
 * The plumbing itself is the client's {@link TransactionalPort}.
 *
 * The ownership gate: a failed or fenced transaction may mean this member is a zombie (its
 * session expired while it was stopped, and the partition has a new owner). Opening the
 * reset partition then would make a new producer whose initialisation fences the rightful
 * owner's. So a reset partition stays held, and no producer is made for it, until this
 * member is known to still own it in the current generation: a coordinator answer to a
 * request sent after the failure ({@link ExactlyOnce.owned}, from the client's heartbeat),
 * or a new assignment (which replaces the lane, or keeps it in an incremental one:
 * {@link ExactlyOnce.joined}). A zombie's heartbeat fails and it rejoins: it opens only what
 * the new generation gives it.
 *
 * @module
 */
import type { CommitOffset } from "../port/mod.ts";
import type { Claims } from "./claims.ts";
import type { Dispatcher, Lane } from "../dispatch/mod.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { EventHub } from "../port/mod.ts";
import { tpKey } from "../dispatch/mod.ts";
import {
  claimEnd,
  emptyTransactionMetrics,
  TransactionFailedError,
  type TransactionalPort,
  type TransactionMetrics,
  TransactionStage,
} from "../port/mod.ts";
import type { Frontier } from "../../tracker/frontier.ts";

/** What {@link ExactlyOnce} reads and drives. */
export interface ExactlyOnceInputs<M> {
  /** The lanes; a reset replaces some. */
  readonly dispatcher: Dispatcher<M>;
  /** A reset loses and reassigns trackers. */
  readonly frontier: Frontier;
  /** Emits `transaction` and `error` (`committed-read`). */
  readonly events: EventHub;
  /** A lane reset while the consumer is not live drains. */
  readonly life: ConsumerLife;
  /** Holds new lanes and decodes their claims once the port has read the committed offsets. */
  readonly claims: Claims<M>;
}

/** The exactly-once parts of one consumer. */
export class ExactlyOnce<M> {
  /** The client's transactional plumbing. */
  readonly port: TransactionalPort;
  /** Outputs of completed records, waiting for the transaction that calls them finished. */
  readonly stage: TransactionStage<Lane<M>> = new TransactionStage<Lane<M>>();
  /** Bound of one transaction (ms). */
  readonly timeoutMs: number;
  /** Counters, read by `metrics()`. */
  readonly m: TransactionMetrics = emptyTransactionMetrics();
  readonly #in: ExactlyOnceInputs<M>;
  /** Lanes reset after a failed transaction, held until ownership is confirmed: when the failure was known (`Date.now()`), where to seek without a committed offset. */
  readonly #parked = new Map<Lane<M>, { readonly since: number; readonly fallback: number | undefined }>();

  /**
   * The hooks over `port`.
   * @param port the client's transactional plumbing
   * @param timeoutMs bound of one transaction (validated by `resolveTransactionalOptions`)
   * @param inputs what they read and drive
   */
  constructor(port: TransactionalPort, timeoutMs: number, inputs: ExactlyOnceInputs<M>) {
    this.port = port;
    this.timeoutMs = timeoutMs;
    this.#in = inputs;
  }

  /** Releases the producers of partitions this consumer no longer owns (best-effort). */
  release(lanes: readonly Lane<M>[]): void {
    void this.port.release(lanes).catch(() => {});
  }

  /**
   * One commit cycle in exactly-once mode: per partition, the ready outputs of the records
   * the commit calls finished, taken in this tick (the proposal was made in it), then one
   * transaction each. Failed partitions are reset; the cycle then rejects.
   * @throws {TransactionFailedError} when a transaction failed
   */
  async commit(offsets: readonly CommitOffset[]): Promise<void> {
    const { dispatcher, events } = this.#in;
    const lanes = offsets.map((o) => dispatcher.lane(o.topic, o.partition));
    const txs = offsets.map((o, i) => ({ ...o, outputs: lanes[i] ? this.stage.take(lanes[i]!, claimEnd(o)) : [] }));
    this.stage.prune((l) => l.ended);
    const m = this.m;
    m.begun += txs.length;
    const started = performance.now();
    let outcomes;
    try {
      outcomes = await this.port.commit(txs, this.timeoutMs);
    } catch (error) {
      outcomes = txs.map(() => ({ ok: false as const, fenced: false, error }));
    }
    const latencyMs = performance.now() - started;
    const reset: Lane<M>[] = [];
    let firstError: unknown;
    outcomes.forEach((r, i) => {
      const t = txs[i];
      if (r.ok) {
        m.committed++;
        m.records += t.outputs.length;
        m.lastSize = t.outputs.length;
        m.lastLatencyMs = latencyMs;
        if (m.maxLatencyMs === undefined || latencyMs > m.maxLatencyMs) m.maxLatencyMs = latencyMs;
      } else {
        if (r.fenced) m.fenced++;
        else m.aborted++;
        firstError ??= r.error;
        const lane = lanes[i];
        if (lane && !lane.ended) reset.push(lane);
      }
      if (events.has("transaction")) {
        events.emit("transaction", {
          topic: t.topic,
          partition: t.partition,
          outcome: r.ok ? "committed" : r.fenced ? "fenced" : "aborted",
          offset: t.offset,
          records: t.outputs.length,
          latencyMs,
          ...(r.ok ? {} : { error: r.error }),
        });
      }
    });
    if (reset.length > 0) this.#reset(reset);
    if (firstError !== undefined || outcomes.some((r) => !r.ok)) {
      throw new TransactionFailedError(
        `${outcomes.filter((r) => !r.ok).length} of ${txs.length} transactions failed; their partitions run again from the committed offsets` +
          (firstError instanceof Error ? ` (${firstError.message})` : ""),
      );
    }
  }

  /**
   * A failed transaction: its partitions start over like a fresh assignment (tracker and
   * ready outputs discarded, producer replaced, committed offsets read again, fetching
   * sought back) once this member is known to still own them (the ownership gate: held
   * until {@link owned} or {@link joined}). `confirmed` restarts from the broker's committed offset. A partition
   * being revoked (draining while the consumer is live) does not start over: it ends
   * here and its producer is released; its next owner (this consumer too, should the
   * next assignment keep it) redoes the records from the committed offset.
   */
  #reset(lanes: readonly Lane<M>[]): void {
    const { dispatcher, frontier, life } = this.#in;
    const fresh: Lane<M>[] = [];
    const leaving: Lane<M>[] = [];
    const fallbacks = new Map<string, number>();
    for (const lane of lanes) {
      if (lane.ended || dispatcher.lane(lane.topic, lane.partition) !== lane) continue;
      const revoked = life.live && lane.state === "draining";
      const origin = lane.tracker.origin;
      if (origin !== undefined) fallbacks.set(tpKey(lane.topic, lane.partition), origin);
      frontier.lose(lane.topic, lane.partition);
      dispatcher.removeLane(lane);
      this.stage.drop(lane);
      this.m.resets++;
      if (revoked) {
        leaving.push(lane);
        continue;
      }
      const next = dispatcher.addLane(lane.topic, lane.partition, frontier.assign(lane.topic, lane.partition));
      if (!life.live) dispatcher.stopLane(next, "draining");
      fresh.push(next);
    }
    if (leaving.length > 0) this.release(leaving);
    if (fresh.length > 0) {
      // Held, no producer made: this member may be a zombie whose partitions have a new owner.
      this.#in.claims.hold(fresh);
      const since = Date.now();
      for (const lane of fresh) this.#parked.set(lane, { since, fallback: fallbacks.get(tpKey(lane.topic, lane.partition)) });
    }
  }

  /**
   * The group coordinator accepted this member in its current generation, answering a
   * request sent at `sentAt` (`Date.now()` clock): the lanes reset before that request
   * went out are still this member's; they open now (a new producer each, fencing the old).
   * A lane reset in the same millisecond waits for a later answer.
   */
  owned(sentAt: number): void {
    this.#unpark((since) => sentAt > since);
  }

  /**
   * A new assignment took effect: every reset lane it kept (an incremental assignment keeps
   * the lanes it does not revoke) is this member's in the new generation and opens now;
   * the lanes it replaced are forgotten.
   */
  joined(): void {
    this.#unpark(() => true);
  }

  /** Partitions reset after a failed transaction that wait for their ownership to be confirmed. */
  get waiting(): number {
    let n = 0;
    for (const lane of this.#parked.keys()) if (!lane.ended) n++;
    return n;
  }

  #unpark(confirms: (since: number) => boolean): void {
    const lanes: Lane<M>[] = [];
    const fallbacks = new Map<string, number>();
    for (const [lane, p] of this.#parked) {
      if (lane.ended) this.#parked.delete(lane); // replaced or lost meanwhile: its next owner opens it
      else if (confirms(p.since)) {
        this.#parked.delete(lane);
        lanes.push(lane);
        if (p.fallback !== undefined) fallbacks.set(tpKey(lane.topic, lane.partition), p.fallback);
      }
    }
    if (lanes.length > 0) this.#open(lanes, fallbacks);
  }

  /**
   * Holds new lanes until their producers are open (fenced) and their committed offsets read; then claims and release.
   * @param fallbacks per {@link tpKey}: where a reset lane's tracker began, should no offset be committed
   */
  open(lanes: readonly Lane<M>[], fallbacks: ReadonlyMap<string, number>): void {
    if (lanes.length === 0) return;
    this.#in.claims.hold(lanes);
    this.#open(lanes, fallbacks);
  }

  /**
   * One open of `lanes` (held). It stops as soon as any of them ends: the port must not go
   * on taking authority over (fencing the next owner of) a partition that is no longer
   * ours. The lanes still live then open again on their own.
   */
  #open(lanes: readonly Lane<M>[], fallbacks: ReadonlyMap<string, number>): void {
    const { claims, events } = this.#in;
    const parts = lanes.map((l) => {
      const fallback = fallbacks.get(tpKey(l.topic, l.partition));
      return { topic: l.topic, partition: l.partition, kept: false, ...(fallback !== undefined ? { fallback } : {}) };
    });
    const stop = new AbortController();
    const ended = (): void => stop.abort(new Error("a partition ended before its producer was open"));
    for (const l of lanes) l.controller.signal.addEventListener("abort", ended, { once: true });
    const settled = (): void => {
      for (const l of lanes) l.controller.signal.removeEventListener("abort", ended);
    };
    if (lanes.some((l) => l.controller.signal.aborted)) ended();
    this.port.open(parts, stop.signal).then(
      (positions) => {
        settled();
        claims.decode(lanes, positions);
      },
      (error: unknown) => {
        settled();
        const live = lanes.filter((l) => !l.controller.signal.aborted);
        // Stopped because some lanes ended: the others open without them.
        if (stop.signal.aborted && live.length > 0 && live.length < lanes.length) this.#open(live, fallbacks);
        // The port gave up otherwise (it retries until the signal aborts, e.g. it was closed): nothing to release.
        else if (lanes.some((l) => !l.ended)) events.emit("error", { kind: "committed-read", error });
      },
    );
  }
}
