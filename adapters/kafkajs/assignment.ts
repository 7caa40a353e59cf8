/**
 * The KafkaJS binding's view of the group assignment: which partitions are this
 * member's now (commits go only for those: the broker accepts commits from a member for
 * partitions it no longer owns, kafkajs #1046), the new assignment of each `GROUP_JOIN`
 * (stale pauses cleared, committed offsets and metadata read through the consumer's own
 * cluster, adapters/kafkajs/joined_group.ts, or with the admin client of `kafka` where that
 * group cannot be reached), and one orderly revoke per rebalance.
 *
 * @module
 */
import type { Consumer, KafkaMessage } from "./types.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import type { ClientSink, CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";

/** What a {@link KafkaJSAssignment} reads and drives. */
export interface KafkaJSAssignmentInputs {
  /** The KafkaJS consumer whose topics it pauses and resumes. */
  readonly consumer: Consumer;
  /** The topics (names or patterns) subscribed to. */
  readonly topics: ReadonlyArray<string | RegExp>;
  /** The runner's sink (`undefined` before the start). */
  sink(): ClientSink<KafkaMessage> | undefined;
  /** Whether the binding closed (no more reads). */
  closed(): boolean;
  /** Whether the runner stopped fetching (a new assignment stays paused, nothing is read). */
  stopped(): boolean;
}

/** The current assignment of one KafkaJS binding. */
export class KafkaJSAssignment {
  readonly #in: KafkaJSAssignmentInputs;
  #assignment = new Set<string>();
  #assignedTopics: string[] = [];
  #revoking: Promise<void> | undefined; // the orderly revoke of the current rebalance

  /**
   * The assignment bookkeeping of one binding.
   * @param inputs what it reads and drives
   */
  constructor(inputs: KafkaJSAssignmentInputs) {
    this.#in = inputs;
  }

  /** Whether the partition is in the current assignment. */
  has(topic: string, partition: number): boolean {
    return this.#assignment.has(tpKey(topic, partition));
  }

  /** Partitions of the current assignment. */
  partitions(): TopicPartition[] {
    return [...this.#assignment].map((k) => {
      const i = k.lastIndexOf("\u0000");
      return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
    });
  }

  /**
   * A `GROUP_JOIN`: the member's new assignment, handed to the sink after KafkaJS's pauses
   * are cleared, with a read of its committed offsets when `read` is given.
   * @param memberAssignment the event's assignment (topic → partitions)
   * @param read reads the committed offsets and metadata of the partitions named (tried a few times)
   */
  joined(memberAssignment: Record<string, number[]>, read?: (partitions: readonly TopicPartition[]) => Promise<CommittedPosition[]>): void {
    this.#revoking = undefined;
    const partitions: TopicPartition[] = [];
    for (const [topic, ps] of Object.entries(memberAssignment)) {
      for (const partition of ps) partitions.push({ topic, partition });
    }
    const topics = new Set<string>([...this.#assignedTopics, ...Object.keys(memberAssignment)]);
    for (const t of this.#in.topics) if (typeof t === "string") topics.add(t);
    this.#assignment = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    this.#assignedTopics = Object.keys(memberAssignment);
    // KafkaJS keeps pauses across rebalances: clear them all; the runner pauses anew what it needs.
    try {
      this.#in.consumer.resume([...topics].map((topic) => ({ topic })));
    } catch {
      // not running
    }
    const committed = read !== undefined && partitions.length > 0 && !this.#in.stopped()
      ? this.#committed(read, partitions)
      : undefined;
    this.#in.sink()?.assigned(partitions, committed);
    if (this.#in.stopped()) this.pauseAll();
  }

  /** KafkaJS disconnected (a `CRASH`): nothing is assigned until the next `GROUP_JOIN`. */
  lost(): void {
    this.#assignment = new Set();
  }

  /**
   * One orderly revoke per rebalance, whether eachBatch or the REBALANCING event saw it
   * first. `awaited`: eachBatch waits for it (KafkaJS rejoins only after); the REBALANCING
   * event does not (KafkaJS rejoins at once), and then the runner starts nothing more.
   */
  revoke(awaited: boolean): Promise<void> {
    this.#revoking ??= this.#in.sink()?.revoking(undefined, { awaited }).catch(() => {}) ?? Promise.resolve();
    return this.#revoking;
  }

  /** Pauses every topic assigned or subscribed to by name (the runner stopped fetching). */
  pauseAll(): void {
    const topics = new Set<string>(this.#assignedTopics);
    for (const t of this.#in.topics) if (typeof t === "string") topics.add(t);
    try {
      this.#in.consumer.pause([...topics].map((topic) => ({ topic })));
    } catch {
      // not running
    }
  }

  /** The committed offsets and metadata of `partitions` (a few tries: a rejection only costs the claims). */
  async #committed(read: (partitions: readonly TopicPartition[]) => Promise<CommittedPosition[]>, partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.#in.closed()) break;
      try {
        return await read(partitions);
      } catch (error) {
        lastError = error;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    throw lastError ?? new Error("the consumer closed before the committed offsets were read");
  }
}
