/**
 * Each assigned partition's log end offset as the client last saw it, for the lag in
 * {@link ParallelConsumer.metrics}: from the fetches (a delivered batch's `endOffset`,
 * or {@link ClientSink.endOffsets} for a fetch that brought no records), and, for
 * partitions no fetch reports (paused ones: a client fetches nothing of them), from the
 * client's own offset query ({@link ConsumerClient.endOffsets}) at the commit cadence.
 *
 * The arithmetic of the lag is {@link lagOf}: log end − committed offset.
 *
 * @module
 */
import type { CommittedPosition, ConsumerClient, EndOffset, TopicPartition } from "../port/mod.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { Lane } from "./lane.ts";
import { toOffset } from "../../tracker/offset.ts";

/**
 * A partition's lag: its log end offset minus its committed offset, never below 0.
 *
 * The committed offset is `confirmed` (the last commit the broker acknowledged in this
 * assignment); before this assignment's first acknowledged commit it is `origin`: the
 * group's committed offset as read at assignment, else where this assignment began
 * reading (where the client's reset policy placed it when the group had none). Unknown
 * (`undefined`) while the log end is unknown, or while neither is known (nothing
 * committed, read nor delivered yet).
 *
 * @param endOffset the log end offset, if known
 * @param confirmed the last acknowledged commit of this assignment, if any
 * @param origin the committed offset read at assignment, else where this assignment began reading, if known
 *
 * @example
 * ```ts
 * import { lagOf } from "./log_end.ts";
 * lagOf(120, 100, 40); // 20
 * lagOf(120, undefined, 40); // 80: no commit yet, measured from where reading began
 * lagOf(undefined, 100, 40); // undefined: log end not seen yet
 * ```
 */
export function lagOf(endOffset: number | undefined, confirmed: number | undefined, origin: number | undefined): number | undefined {
  const committed = confirmed ?? origin;
  if (endOffset === undefined || committed === undefined) return undefined;
  return endOffset > committed ? endOffset - committed : 0;
}

/** What {@link LogEnds} reads and drives. */
export interface LogEndInputs<M> {
  /** The lanes of the current assignment. */
  readonly dispatcher: Dispatcher<M>;
  /** The client; its optional `endOffsets` refreshes partitions no fetch reports. */
  readonly client: Pick<ConsumerClient<M>, "endOffsets">;
  /** Whether the consumer is live. */
  readonly life: ConsumerLife;
  /** Milliseconds between refreshes (the commit interval). */
  readonly intervalMs: number;
}

/** The log end offset of each lane, kept per lane: a new assignment starts unknown. */
export class LogEnds<M> {
  readonly #ends = new WeakMap<Lane<M>, number>();
  readonly #read = new WeakMap<Lane<M>, number>(); // the committed offset read at assignment
  readonly #inputs: LogEndInputs<M>;
  #timer: ReturnType<typeof setInterval> | undefined;
  #querying = false;

  /**
   * Log ends over `inputs`.
   * @param inputs lanes, client, life, refresh interval
   */
  constructor(inputs: LogEndInputs<M>) {
    this.#inputs = inputs;
  }

  /**
   * The client saw `endOffset` as the partition's log end. Kept only for a partition of
   * the current assignment; an answer below the value kept (an older answer arriving
   * late) does not move it back.
   * @throws {InvalidOffsetError} for an end offset that is not an integer in [0, 2^53)
   */
  seen(topic: string, partition: number, endOffset: unknown): void {
    const end = toOffset(endOffset, `endOffset of ${topic}/${partition}`);
    const lane = this.#inputs.dispatcher.lane(topic, partition);
    if (lane === undefined || lane.ended) return;
    const known = this.#ends.get(lane);
    if (known === undefined || end > known) this.#ends.set(lane, end);
  }

  /**
   * {@link seen} for each; every value is checked before any is kept.
   * @throws {InvalidOffsetError} for an end offset that is not an integer in [0, 2^53): nothing is kept
   */
  seenAll(ends: readonly EndOffset[]): void {
    for (const e of ends) toOffset(e.endOffset, `endOffset of ${e.topic}/${e.partition}`);
    for (const e of ends) this.seen(e.topic, e.partition, e.endOffset);
  }

  /** The lane's log end offset, if seen in its assignment. */
  of(lane: Lane<M>): number | undefined {
    return this.#ends.get(lane);
  }

  /**
   * The committed offsets read at the assignment of `partitions` (the sink's `assigned`):
   * kept for the lanes assigned now, as the lag's base before their first commit. A
   * rejection or an offset that is not one keeps nothing.
   */
  committedRead(partitions: readonly TopicPartition[], committed: Promise<readonly CommittedPosition[]>): void {
    const lanes = partitions.map((p) => this.#inputs.dispatcher.lane(p.topic, p.partition));
    committed.then((positions) => {
      for (const p of positions) {
        const i = partitions.findIndex((x) => x.topic === p.topic && x.partition === p.partition);
        const lane = lanes[i];
        if (lane !== undefined && !lane.ended && Number.isSafeInteger(p.offset) && (p.offset as number) >= 0) this.#read.set(lane, p.offset as number);
      }
    }, () => {});
  }

  /** The committed offset read at the lane's assignment, if any. */
  readAt(lane: Lane<M>): number | undefined {
    return this.#read.get(lane);
  }

  /** Starts the periodic refresh when the client can query end offsets. */
  start(): void {
    if (typeof this.#inputs.client.endOffsets !== "function") return;
    this.#timer = setInterval(() => void this.refresh(), this.#inputs.intervalMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Ends the periodic refresh. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Asks the client for the end offsets of the partitions no fetch reports now (paused,
   * held) or whose log end is still unknown; one query at a time. A failed query changes
   * nothing (the values stay as last seen; an outage is reported by the client's other calls).
   */
  async refresh(): Promise<void> {
    const { client, dispatcher, life } = this.#inputs;
    if (this.#querying || !life.live || typeof client.endOffsets !== "function") return;
    const stale = dispatcher.lanes().filter((l) =>
      !l.ended && (l.paused || l.userPaused || l.held || this.#ends.get(l) === undefined)
    );
    if (stale.length === 0) return;
    this.#querying = true;
    let answer: readonly EndOffset[];
    try {
      answer = await client.endOffsets(stale.map((l) => ({ topic: l.topic, partition: l.partition })));
    } catch {
      return;
    } finally {
      this.#querying = false;
    }
    try {
      this.seenAll(answer);
    } catch {
      // a bad value from the client: the log ends stay as they were
    }
  }
}
