/**
 * What the KafkaJS binding reads from the cluster besides fetching: the committed offsets
 * and completed sets of each new assignment, and the log ends of paused partitions. Both go
 * through the consumer's own consumer group and its connection (joined_group.ts); the
 * admin client of `kafka` (connected on first need, never after close) serves only where
 * that group was not reached (a second KafkaJS copy), and the dead-letter topic check at
 * the start.
 *
 * @module
 */
import type { Admin } from "kafkajs";
import type { Kafka } from "./types.ts";
import { readCommitted } from "./committed.ts";
import { type JoinedGroup, joinedGroup, readJoinedCommitted, readJoinedEndOffsets } from "./joined_group.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import { endOffsetsByTopic } from "../shared/end_offsets.ts";
import type { CommittedPosition, EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";

/** Reads the committed positions of a new assignment's partitions. */
export type CommittedReader = (partitions: readonly TopicPartition[]) => Promise<CommittedPosition[]>;

/** The cluster reads of one KafkaJS binding (see the module doc). */
export class GroupReads {
  readonly #kafka: Kafka | undefined;
  #group: JoinedGroup | undefined; // the KafkaJS consumer group of the last join, when it was reached
  #admin: Promise<Admin> | undefined;
  #closed = false;

  /**
   * The reads of one binding.
   * @param kafka the `kafka` option, if given
   */
  constructor(kafka: Kafka | undefined) {
    this.#kafka = kafka;
  }

  /**
   * A `GROUP_JOIN` (call synchronously from KafkaJS's listener): how to read the new
   * assignment's committed positions, or `undefined` when neither the group nor `kafka`
   * can (a KafkaJS copy other than the one wrapped, without `kafka`).
   */
  joined(payload: { groupId: string; memberId: string }): CommittedReader | undefined {
    const group = this.#group = joinedGroup(payload);
    if (group !== undefined) return (partitions) => readJoinedCommitted(group, partitions);
    const kafka = this.#kafka;
    if (kafka === undefined) return undefined;
    return async (partitions) => {
      const admin = await this.admin(kafka);
      if (this.#closed) throw new Error("the consumer closed before the committed offsets were read");
      const want = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
      return await readCommitted(admin, payload.groupId, [...new Set(partitions.map((p) => p.topic))], (t, p) => want.has(tpKey(t, p)));
    };
  }

  /** The log ends of `partitions` (paused: no fetch reports them); none when nothing can read them. */
  endOffsets(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]> {
    if (this.#group !== undefined) return readJoinedEndOffsets(this.#group, partitions);
    const kafka = this.#kafka;
    if (kafka !== undefined) return endOffsetsByTopic(partitions, async (t) => (await this.admin(kafka)).fetchTopicOffsets(t));
    return Promise.resolve([]);
  }

  /** `kafka`'s admin client, connected on first need (a failed connect is tried again at the next need). */
  async admin(kafka: Kafka): Promise<Admin> {
    if (this.#closed) throw new Error("the consumer is closed"); // connect no admin client that close() would not disconnect
    const connecting = this.#admin ??= (async () => {
      const admin = kafka.admin();
      await admin.connect();
      return admin;
    })();
    try {
      return await connecting;
    } catch (error) {
      if (this.#admin === connecting) this.#admin = undefined;
      throw error;
    }
  }

  /** Disconnects the admin client, if one was connected (the binding may connect it again at its next start). */
  async disconnect(): Promise<void> {
    const admin = this.#admin;
    this.#admin = undefined;
    if (admin) await admin.then((a) => a.disconnect()).catch(() => {});
  }

  /** The binding closed: nothing more is read, the group is let go. */
  close(): void {
    this.#closed = true;
    this.#group = undefined;
  }
}
