/**
 * Commits of the KafkaJS binding. They go only through `consumer.commitOffsets`, only for
 * partitions of the current assignment (the broker accepts commits from a member for
 * partitions it no longer owns: kafkajs #1046), one at a time (KafkaJS retries a failed
 * commit internally, so one given up on could land after a newer one), and count as
 * acknowledged only when KafkaJS reports the `COMMIT_OFFSETS` event for them (KafkaJS
 * resolves `commitOffsets` without sending anything once the consumer stopped).
 *
 * @module
 */
import type { CommitOffset } from "../../core/consumer/port/mod.ts";
import { isUnreachable } from "./errors.ts";
import type { Consumer } from "./types.ts";
import { toStored } from "../shared/stored_metadata.ts";

/** A commit as KafkaJS takes it. */
type KafkaJSOffset = { topic: string; partition: number; offset: string; metadata?: string };

/** What {@link KafkaJSCommits} reads and drives. */
export interface KafkaJSCommitInputs {
  /** The KafkaJS consumer the commits go through. */
  readonly consumer: Pick<Consumer, "commitOffsets">;
  /** Whether the binding is running (started and not closed): otherwise nothing is committed. */
  readonly running: () => boolean;
  /** Whether `topic`/`partition` is in the current assignment. */
  readonly assigned: (topic: string, partition: number) => boolean;
  /** Reports a commit that found no connection to the coordinator (one more failed attempt to reach the cluster). */
  readonly unreachable: (error: unknown) => void;
}

interface PendingAck {
  readonly signature: string;
  acked: boolean;
}

/** The commit's identity: its partitions and offsets, order-independent. */
function signature(list: ReadonlyArray<{ topic: string; partition: number; offset: string }>): string {
  return list.map((o) => `${o.topic}\u0000${o.partition}\u0000${o.offset}`).sort().join("\u0001");
}

/** Sends commits one at a time and matches them with KafkaJS's `COMMIT_OFFSETS` events. */
export class KafkaJSCommits {
  readonly #in: KafkaJSCommitInputs;
  #pendingAcks = new Set<PendingAck>();
  #tail: Promise<void> = Promise.resolve(); // settles when the last commit handed to KafkaJS settled

  /**
   * Commits over `inputs`.
   * @param inputs what they read and drive
   */
  constructor(inputs: KafkaJSCommitInputs) {
    this.#in = inputs;
  }

  /** Commits `offsets` once the commit before settled; resolves only when KafkaJS reported it sent. */
  async commit(offsets: readonly CommitOffset[]): Promise<void> {
    const list = offsets.map((o) => ({
      topic: o.topic,
      partition: o.partition,
      offset: String(o.offset),
      ...(o.metadata !== undefined ? { metadata: toStored(o.metadata) } : {}), // stored with a NUL (shared/stored_metadata.ts)
    }));
    // KafkaJS retries a failed commit internally, so one the runner gave up on (timed out)
    // may still land later, after a newer one, and move the committed offset back: each
    // commit leaves only once the one before it settled in KafkaJS.
    const before = this.#tail;
    const run = before.then(() => this.#send(list));
    this.#tail = run.then(() => {}, () => {});
    await run;
  }

  /** KafkaJS's `COMMIT_OFFSETS` event: the pending commit of exactly these offsets was sent. */
  acknowledged(topics: ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: unknown }> }>): void {
    if (this.#pendingAcks.size === 0) return;
    const sig = signature(topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: String(p.offset) }))));
    for (const pending of this.#pendingAcks) if (pending.signature === sig) pending.acked = true;
  }

  async #send(list: KafkaJSOffset[]): Promise<void> {
    const inputs = this.#in;
    if (!inputs.running()) throw new Error("the KafkaJS consumer is not running: nothing was committed");
    for (const o of list) {
      if (!inputs.assigned(o.topic, o.partition)) {
        throw new Error(`refusing to commit ${o.topic}/${o.partition}: not in the current assignment`);
      }
    }
    const pending: PendingAck = { signature: signature(list), acked: false };
    this.#pendingAcks.add(pending);
    try {
      await inputs.consumer.commitOffsets(list);
    } catch (error) {
      // No connection to the coordinator: one more failed attempt to reach the cluster.
      if (isUnreachable(error)) inputs.unreachable(error);
      throw error;
    } finally {
      this.#pendingAcks.delete(pending);
    }
    if (!pending.acked) throw new Error("KafkaJS did not send the commit (the consumer stopped): outcome unknown");
  }
}
