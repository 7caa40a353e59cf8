/**
 * Where a new assignment's partitions start: their committed offsets (read with
 * OffsetFetch, which also brings the completed sets), else the earliest or latest offset
 * (`consumer.listOffsets`), as `auto.offset.reset` would choose.
 *
 * @module
 */
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import { sleepUnlessAborted } from "../kafkajs/waits.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import { readCommitted } from "./group_requests.ts";
import type { ClientConsumer } from "./types.ts";

/**
 * The committed positions of `partitions`, a few tries 200/400/600 ms apart (the runner
 * only loses the completed sets' claims when this rejects; the positions are read again).
 * @param closed whether the binding closed (no more tries)
 */
export async function committedWithRetries(
  consumer: ClientConsumer,
  partitions: readonly TopicPartition[],
  closed: () => boolean,
): Promise<CommittedPosition[]> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3 && !closed(); attempt++) {
    try {
      return await readCommitted(consumer, partitions);
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
  }
  throw lastError ?? new Error("the consumer closed before the committed offsets were read");
}

/** What {@link startPositions} needs besides the consumer. */
export interface StartPositionInputs {
  /** No committed offset: start at the earliest offset (else the latest). */
  readonly fromBeginning: boolean;
  /** The latest offset is the last stable one (`read_committed`). */
  readonly readCommitted: boolean;
  /** Whether the assignment is still current and the binding open (else the wait ends). */
  readonly live: () => boolean;
  /** A failed read: reports it and returns the backoff before the next one. */
  readonly failed: (error: unknown) => number;
  /** Ends the waits (shutdown). */
  readonly signal: AbortSignal;
}

/**
 * The start positions of `partitions` by key (`tpKey`): `committed`'s offsets, read again
 * (with the runner's backoff) until it succeeds if it rejected, and the earliest or latest
 * offset where none is committed; `undefined` when the assignment ended first.
 */
export async function startPositions(
  consumer: ClientConsumer,
  partitions: readonly TopicPartition[],
  committed: Promise<CommittedPosition[]>,
  inputs: StartPositionInputs,
): Promise<Map<string, number> | undefined> {
  let read: CommittedPosition[] | undefined = await committed.catch(() => undefined);
  while (inputs.live() && !inputs.signal.aborted) {
    try {
      read ??= await readCommitted(consumer, partitions);
      const positions = new Map<string, number>();
      const missing = new Map<string, number[]>();
      for (const r of read) {
        if (r.offset !== undefined) positions.set(tpKey(r.topic, r.partition), r.offset);
        else missing.set(r.topic, [...(missing.get(r.topic) ?? []), r.partition]);
      }
      if (missing.size > 0) {
        const ends = await consumer.listOffsets({
          topics: [...missing.keys()],
          partitions: Object.fromEntries(missing),
          timestamp: inputs.fromBeginning ? -2n : -1n,
          isolationLevel: inputs.readCommitted ? 1 : 0,
        });
        for (const [topic, ps] of missing) {
          for (const partition of ps) {
            const o = Number(ends.get(topic)?.[partition]);
            if (!Number.isSafeInteger(o) || o < 0) throw new Error(`no start offset for ${topic}/${partition}`);
            positions.set(tpKey(topic, partition), o);
          }
        }
      }
      return positions;
    } catch (error) {
      read = undefined;
      if (!(await sleepUnlessAborted(inputs.failed(error), inputs.signal))) return undefined;
    }
  }
  return undefined;
}
