/**
 * A group's committed offsets and metadata, as KafkaJS's admin client reads them, in the
 * port's terms ({@link CommittedPosition}).
 *
 * @module
 */
import type { Admin } from "kafkajs";
import type { CommittedPosition } from "../../core/consumer/port/mod.ts";
import { fromStored } from "../shared/stored_metadata.ts";

/**
 * Reads the committed positions of `groupId` on `topics` with one `fetchOffsets`. A
 * partition without a committed offset (KafkaJS answers `-1`) has `offset: undefined`.
 * @param admin a connected KafkaJS admin client
 * @param groupId the consumer group
 * @param topics the topics to read
 * @param keep when given, only the partitions it accepts are returned
 */
export async function readCommitted(
  admin: Admin,
  groupId: string,
  topics: readonly string[],
  keep?: (topic: string, partition: number) => boolean,
): Promise<CommittedPosition[]> {
  const answer = await admin.fetchOffsets({ groupId, topics: [...topics] });
  return committedPositions(answer, keep);
}

/**
 * An OffsetFetch answer as KafkaJS gives it (its admin's `fetchOffsets`, or a coordinator's
 * `offsetFetch` responses) in the port's terms: `-1` (no committed offset) is `undefined`, the
 * stored metadata's trailing NUL dropped.
 * @param answer per topic, its partitions' offsets (decimal strings) and metadata
 * @param keep when given, only the partitions it accepts are returned
 */
export function committedPositions(
  answer: ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: string; metadata: string | null }> }>,
  keep?: (topic: string, partition: number) => boolean,
): CommittedPosition[] {
  const out: CommittedPosition[] = [];
  for (const t of answer) {
    for (const p of t.partitions) {
      if (keep && !keep(t.topic, p.partition)) continue;
      const offset = Number(p.offset);
      out.push({
        topic: t.topic,
        partition: p.partition,
        offset: Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined,
        metadata: fromStored(p.metadata),
      });
    }
  }
  return out;
}
