/**
 * Pauses asked for by the user (`consumer.pause()` / `consumer.resume()`), as opposed to
 * the dispatcher's own backpressure pauses: while a partition is paused by the user no
 * record of it starts (running ones finish; retries wait), its fetching is paused at the
 * client (the group membership stays: the client keeps polling and heartbeating), and a
 * batch delivered anyway is refused (delivered again after the resume).
 *
 * The two kinds compose: fetching resumes only when neither holds it. A backpressure
 * resume leaves a user-paused partition paused at the client; a user resume leaves a
 * partition over its high mark (or stopped, or held for its claim) paused.
 *
 * A pause of the whole consumer covers the partitions assigned later too; a pause of
 * named partitions lasts across rebalances until they are resumed.
 *
 * @module
 */
import type { ConsumerClient, TopicPartition } from "../port/mod.ts";
import type { Dispatcher, Lane } from "../dispatch/mod.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { EventHub } from "../port/mod.ts";
import { tpKey } from "../dispatch/mod.ts";
import { describe, InvalidArgumentError } from "../../errors.ts";

/** What a {@link UserPause} reads and drives. */
export interface UserPauseInputs<M> {
  /** Its lanes are paused and resumed; pumped after a resume. */
  readonly dispatcher: Dispatcher<M>;
  /** Fetching is paused and resumed here. */
  readonly client: Pick<ConsumerClient<M>, "pause" | "resume">;
  /** Emits `pause` (reason `user`) and `resume`. */
  readonly events: EventHub;
  /** Fetching resumes only while the consumer is live. */
  readonly life: ConsumerLife;
}

/** Validates the partitions given to `pause()` / `resume()`. */
function checkPartitions(what: string, partitions: unknown): readonly TopicPartition[] {
  if (!Array.isArray(partitions)) {
    throw new InvalidArgumentError(`${what}() takes an array of { topic, partition } (or nothing); got ${describe(partitions)}`);
  }
  for (const p of partitions as Array<Partial<TopicPartition> | null>) {
    const { topic, partition } = p ?? {};
    if (typeof topic !== "string" || topic.length === 0) {
      throw new InvalidArgumentError(`${what}() takes topic names; got ${describe(topic)}`);
    }
    if (typeof partition !== "number" || !Number.isInteger(partition) || partition < 0 || partition > 2147483647) {
      throw new InvalidArgumentError(`${what}() takes partitions in [0, 2^31); got ${describe(partition)} for topic ${JSON.stringify(topic)}`);
    }
  }
  return partitions as readonly TopicPartition[];
}

/** The user's pauses: of the whole consumer, and of named partitions. */
export class UserPause<M> {
  readonly #in: UserPauseInputs<M>;
  #all = false;
  readonly #partitions = new Set<string>();

  /**
   * User pauses over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: UserPauseInputs<M>) {
    this.#in = inputs;
  }

  /** Whether the whole consumer is paused (`pause()` without partitions). */
  get all(): boolean {
    return this.#all;
  }

  /**
   * Pauses the whole consumer (no `partitions`), or those partitions.
   * @throws {InvalidArgumentError} for partitions that are not `{ topic, partition }` (nothing changes)
   */
  pause(partitions?: readonly TopicPartition[]): void {
    if (partitions === undefined) this.#all = true;
    else for (const p of checkPartitions("pause", partitions)) this.#partitions.add(tpKey(p.topic, p.partition));
    for (const lane of this.#in.dispatcher.lanes()) if (this.#covers(lane)) this.#pauseLane(lane);
  }

  /**
   * Resumes every pause (no `partitions`), or the pauses of those partitions (a partition
   * stays paused while the whole consumer is).
   * @throws {InvalidArgumentError} for partitions that are not `{ topic, partition }` (nothing changes)
   */
  resume(partitions?: readonly TopicPartition[]): void {
    if (partitions === undefined) {
      this.#all = false;
      this.#partitions.clear();
    } else for (const p of checkPartitions("resume", partitions)) this.#partitions.delete(tpKey(p.topic, p.partition));
    const { dispatcher, client, events, life } = this.#in;
    const resumed: Lane<M>[] = [];
    for (const lane of dispatcher.lanes()) {
      if (!lane.userPaused || this.#covers(lane)) continue;
      lane.userPaused = false;
      // Fetching resumes unless backpressure, a stop or the claim hold still pauses it.
      if (!lane.paused && !lane.held && lane.state === "active" && life.live) resumed.push(lane);
    }
    if (resumed.length > 0) {
      client.resume(resumed);
      if (events.has("resume")) {
        const now = Date.now();
        for (const lane of resumed) {
          events.emit("resume", { topic: lane.topic, partition: lane.partition, pausedMs: now - lane.userPausedAt, retained: lane.retained });
        }
      }
    }
    dispatcher.pump();
  }

  /** A lane was added (a new assignment): paused at once when a pause covers it. */
  added(lane: Lane<M>): void {
    if (this.#covers(lane)) this.#pauseLane(lane);
  }

  #covers(lane: Lane<M>): boolean {
    return this.#all || (this.#partitions.size > 0 && this.#partitions.has(tpKey(lane.topic, lane.partition)));
  }

  #pauseLane(lane: Lane<M>): void {
    if (lane.userPaused || lane.ended) return;
    const { dispatcher, client, events } = this.#in;
    lane.userPaused = true;
    lane.userPausedAt = Date.now();
    client.pause([lane]);
    // A draining lane (revoke, shutdown) runs nothing more either: its drain waits only for what runs.
    if (lane.state === "draining") dispatcher.stopLane(lane, "draining");
    if (events.has("pause")) {
      events.emit("pause", { topic: lane.topic, partition: lane.partition, reason: "user", retained: lane.retained });
    }
  }
}
