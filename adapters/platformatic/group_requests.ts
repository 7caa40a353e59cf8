/**
 * The two group requests the binding sends itself, through the package's exported protocol
 * APIs on the consumer's own connection to the group coordinator:
 * - OffsetCommit v8 with `committedMetadata` (the consumer's `commit()` sends `null`, and on
 *   a rejoin error it rejoins and commits again under the new generation, which may commit
 *   partitions this member no longer owns);
 * - OffsetFetch v8 with `metadata` (the consumer's `listCommittedOffsets()` drops it).
 *
 * @module
 */
import { offsetCommitV8, offsetFetchV8 } from "@platformatic/kafka";
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import type { ClientConsumer } from "./types.ts";
import { fromStored } from "../shared/stored_metadata.ts";

/** A connection to the group's coordinator, through the consumer's connection pool. */
type Connection = Parameters<typeof offsetCommitV8.api.async>[0];

/** The consumer's connection to its group coordinator (found, and connected, on demand). */
export async function coordinatorConnection(consumer: ClientConsumer): Promise<Connection> {
  const node = await consumer.findGroupCoordinator();
  const metadata = await consumer.metadata({ topics: consumer.topics.current });
  const broker = metadata.brokers.get(node);
  if (!broker) throw new Error(`the group coordinator (node ${node}) is not in the cluster metadata`);
  return await consumer.connections.get(broker);
}

/** One partition's commit as OffsetCommit carries it. */
export interface GroupCommit extends TopicPartition {
  /** The next offset to read. */
  readonly offset: number;
  /** The metadata string (`null`: none). */
  readonly metadata: string | null;
}

/**
 * Sends one OffsetCommit (v8) for `offsets` under `generationId`; resolves with the broker's
 * answer (per-partition error codes), rejects with the client's error (a `ResponseError`
 * carries the answer as `response` when some partition failed).
 */
export async function sendOffsetCommit(
  consumer: ClientConsumer,
  generationId: number,
  offsets: readonly GroupCommit[],
): Promise<Awaited<ReturnType<typeof offsetCommitV8.api.async>>> {
  const topics = new Map<string, { name: string; partitions: Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }> }>();
  for (const o of offsets) {
    let t = topics.get(o.topic);
    if (!t) topics.set(o.topic, t = { name: o.topic, partitions: [] });
    t.partitions.push({ partitionIndex: o.partition, committedOffset: BigInt(o.offset), committedLeaderEpoch: -1, committedMetadata: o.metadata });
  }
  const connection = await coordinatorConnection(consumer);
  return await offsetCommitV8.api.async(connection, consumer.groupId, generationId, consumer.memberId ?? "", consumer.groupInstanceId, [...topics.values()]);
}

/**
 * The group's committed offsets and metadata of `partitions` (OffsetFetch v8, require-stable:
 * a pending transactional commit makes the broker answer UNSTABLE_OFFSET_COMMIT, a
 * rejection). A partition without a committed offset has `offset: undefined`.
 */
export async function readCommitted(consumer: ClientConsumer, partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    const list = byTopic.get(topic);
    if (list) list.push(partition);
    else byTopic.set(topic, [partition]);
  }
  const connection = await coordinatorConnection(consumer);
  const answer = await offsetFetchV8.api.async(connection, [{
    groupId: consumer.groupId,
    memberId: null,
    memberEpoch: -1,
    topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
  }], true);
  const out: CommittedPosition[] = [];
  for (const group of answer.groups) {
    for (const t of group.topics) {
      for (const p of t.partitions) {
        const offset = Number(p.committedOffset);
        out.push({
          topic: t.name,
          partition: p.partitionIndex,
          offset: Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined,
          metadata: fromStored(p.metadata),
        });
      }
    }
  }
  return out;
}
