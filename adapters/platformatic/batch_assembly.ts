/**
 * One fetched partition's record batches as the port's {@link DeliveredBatch}: the records
 * at or above the fetch position that `read_committed` lets through, their offsets, and
 * the batch's `next` position (past the last fetched batch, control and aborted batches
 * included, so that the fetch position moves past them).
 *
 * @module
 */
import type { DeliveredBatch } from "../../core/consumer/port/mod.ts";
import { type AbortedTransaction, type BatchHead, deliverableBatches } from "./aborted_filter.ts";

/** A record as a fetch response holds it (the parts read here). */
export interface RawRecord {
  /** Offset minus the batch's first offset. */
  readonly offsetDelta: number;
  /** Timestamp minus the batch's first timestamp. */
  readonly timestampDelta: bigint;
  /** The key bytes, `null` for none. */
  readonly key: Uint8Array | null;
  /** The value bytes, `null` for a tombstone. */
  readonly value: Uint8Array | null;
  /** Header key/value pairs. */
  readonly headers: ReadonlyArray<readonly [Uint8Array | null, Uint8Array | null]>;
}

/** A record batch as a fetch response holds it. */
export interface RawBatch extends BatchHead {
  /** The first record's timestamp. */
  readonly firstTimestamp: bigint;
  /** The records. */
  readonly records: readonly RawRecord[];
}

/**
 * The delivered batch of one partition's fetched `batches`, or `undefined` when the fetch
 * brought nothing at or past `fetchOffset` (no batch, or only records below it).
 * @param fetchOffset the position fetched from: records below it (a compressed batch starts earlier) are left out
 * @param make builds the binding's message for a record at `offset`
 */
export function assembleBatch<M>(
  topic: string,
  partition: number,
  fetchOffset: number,
  batches: readonly RawBatch[] | null | undefined,
  aborted: readonly AbortedTransaction[] | null | undefined,
  readCommitted: boolean,
  make: (batch: RawBatch, record: RawRecord, offset: number) => M,
): DeliveredBatch<M> | undefined {
  if (!batches || batches.length === 0) return undefined;
  const keep = deliverableBatches(batches, aborted, readCommitted);
  const messages: M[] = [];
  const offsets: number[] = [];
  let next = fetchOffset;
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i];
    const first = Number(b.firstOffset);
    const end = first + b.lastOffsetDelta + 1;
    if (end > next) next = end;
    if (!keep[i]) continue;
    for (const r of b.records) {
      const offset = first + r.offsetDelta;
      if (offset < fetchOffset) continue;
      if (offsets.length > 0 && offset <= offsets[offsets.length - 1]) continue; // never twice, never backwards
      messages.push(make(b, r, offset));
      offsets.push(offset);
    }
  }
  if (next <= fetchOffset) return undefined;
  return { topic, partition, messages, offsets, next };
}
