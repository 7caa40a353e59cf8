/**
 * Log end offsets (high watermarks) as the bindings read them from their clients, for the
 * lag in `metrics()` (core/consumer/dispatch/log_end.ts).
 *
 * @module
 */
import type { EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { groupByTopic } from "./topic_partitions.ts";

/**
 * A client's high watermark as an offset: a safe non-negative integer (from a number, a
 * bigint or a decimal string), else `undefined` (unknown: e.g. Confluent's `"-1001"`,
 * KafkaJS's `"-1"`).
 */
export function endOffsetOf(value: unknown): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "bigint" || typeof value === "string" ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n >= 0 && (typeof value !== "string" || /^\d+$/.test(value)) ? n : undefined;
}

/** One partition's offsets as KafkaJS's (and Confluent's) `admin.fetchTopicOffsets` answer them. */
export interface TopicOffset {
  /** The partition. */
  readonly partition: number;
  /** The latest offset (the log end). */
  readonly high?: string;
  /** KafkaJS: the same as `high`. */
  readonly offset?: string;
}

/**
 * The end offsets of `partitions`, one `fetchTopic` per topic (KafkaJS's and Confluent's
 * `admin.fetchTopicOffsets`: a ListOffsets per leader, for every partition of the topic).
 * A topic whose query fails is left out; partitions not asked for are dropped.
 */
export async function endOffsetsByTopic(
  partitions: readonly TopicPartition[],
  fetchTopic: (topic: string) => Promise<readonly TopicOffset[]>,
): Promise<EndOffset[]> {
  const out: EndOffset[] = [];
  await Promise.all(groupByTopic(partitions).map(async ({ topic, partitions: asked }) => {
    let answer: readonly TopicOffset[];
    try {
      answer = await fetchTopic(topic);
    } catch {
      return;
    }
    for (const p of answer) {
      const endOffset = endOffsetOf(p.high ?? p.offset);
      if (endOffset !== undefined && asked.includes(p.partition)) out.push({ topic, partition: p.partition, endOffset });
    }
  }));
  return out;
}
