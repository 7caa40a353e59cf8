/**
 * Small helpers the bindings share for topic-partitions.
 *
 * @module
 */
import type { TopicPartition } from "../../core/consumer/port/mod.ts";

/** A map key for a topic-partition (NUL cannot occur in a topic name). */
export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** `partitions` grouped by topic, in first-seen order: the shape the clients' pause, resume and commit calls take. */
export function groupByTopic(partitions: readonly TopicPartition[]): Array<{ topic: string; partitions: number[] }> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    const list = byTopic.get(topic);
    if (list) list.push(partition);
    else byTopic.set(topic, [partition]);
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
}
