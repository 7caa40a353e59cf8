/**
 * Checks an OffsetCommit response against the commit that was sent: a commit counts as
 * acknowledged only when the broker answered every partition of it with error code 0.
 * A partition the response does not name is a failure (outcome unknown), never a success.
 *
 * @module
 */
import type { TopicPartition } from "../../core/consumer/port/mod.ts";

/** The parts of an OffsetCommit response read here. */
export interface OffsetCommitAnswer {
  /** Per topic, per partition error codes. */
  readonly topics: ReadonlyArray<{
    readonly name: string;
    readonly partitions: ReadonlyArray<{ readonly partitionIndex: number; readonly errorCode: number }>;
  }>;
}

/** A partition whose commit was not acknowledged. */
export interface CommitFailure extends TopicPartition {
  /** The broker's error code; `undefined` when the response did not name the partition. */
  readonly errorCode: number | undefined;
}

/**
 * The partitions of `sent` that `answer` did not acknowledge (empty: every one was).
 * @param sent the partitions the commit carried
 * @param answer the broker's response (a `ResponseError`'s `response` included)
 */
export function commitFailures(sent: readonly TopicPartition[], answer: OffsetCommitAnswer | undefined): CommitFailure[] {
  const codes = new Map<string, number>();
  for (const t of answer?.topics ?? []) {
    for (const p of t.partitions) codes.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
  }
  const out: CommitFailure[] = [];
  for (const { topic, partition } of sent) {
    const code = codes.get(`${topic}\u0000${partition}`);
    if (code !== 0) out.push({ topic, partition, errorCode: code });
  }
  return out;
}
