/**
 * The committed offsets and metadata of a consumer group's partitions, read with a KafkaJS
 * admin client at each assignment (the completed sets ride in the metadata).
 *
 * @module
 */
import type { Admin } from "kafkajs";
import type { CommittedPosition, TopicPartition } from "../core/consumer/client.ts";

/**
 * Reads the committed offset and metadata of `partitions` for `groupId`, in a few tries (a
 * rejection only costs the completed sets: those records run again).
 * @param closed whether the consumer closed meanwhile (then no further try)
 */
export async function readCommitted(
  admin: Admin,
  groupId: string,
  partitions: readonly TopicPartition[],
  closed: () => boolean,
): Promise<CommittedPosition[]> {
  const topics = [...new Set(partitions.map((p) => p.topic))];
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (closed()) break;
    try {
      const answer = await admin.fetchOffsets({ groupId, topics });
      const out: CommittedPosition[] = [];
      for (const t of answer) {
        for (const p of t.partitions) {
          const offset = Number(p.offset);
          out.push({
            topic: t.topic,
            partition: p.partition,
            offset: Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined,
            metadata: p.metadata,
          });
        }
      }
      return out;
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
  }
  throw lastError ?? new Error("the consumer closed before the committed offsets were read");
}
