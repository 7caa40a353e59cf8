/**
 * `read_committed` done as Kafka's own consumer does it, as a pure function over one
 * partition's fetched record batches and the fetch's aborted-transaction list.
 *
 * The broker lists a partition's aborted transactions in the order they *ended*; Kafka's
 * Java consumer orders them by first offset and walks the batches in offset order: a
 * producer's records are aborted from its aborted transaction's first offset until that
 * producer's ABORT control marker. Control batches are never delivered. (KafkaJS assumes
 * the list is sorted and leaks records of interleaved aborted transactions; the
 * `@platformatic/kafka` consumer keeps one range per producer and so leaks the earlier of
 * two aborted transactions of one producer in one fetch: this function is what the binding
 * trusts.)
 *
 * @module
 */
import { abortedIndices, type FetchedRecordView, isAbortMarkerKey } from "../shared/read_committed.ts";

/** Attribute bit of a transactional record batch. */
export const TRANSACTIONAL_BATCH = 0x10;
/** Attribute bit of a control batch (transaction markers). */
export const CONTROL_BATCH = 0x20;

/** The parts of a record batch the filter reads. */
export interface BatchHead {
  /** Offset of the batch's first record. */
  readonly firstOffset: bigint;
  /** Last record's offset minus the first's. */
  readonly lastOffsetDelta: number;
  /** The producer's id (-1: none). */
  readonly producerId: bigint;
  /** Batch attributes (bit 4 transactional, bit 5 control). */
  readonly attributes: number;
  /** The records; a control batch's first record's key says ABORT (type 0) or COMMIT (type 1). */
  readonly records: ReadonlyArray<{ readonly key: Uint8Array | null }>;
}

/** One entry of a fetch response's `abortedTransactions`. */
export interface AbortedTransaction {
  /** The producer whose transaction was aborted. */
  readonly producerId: bigint;
  /** The first offset of the aborted transaction in this partition. */
  readonly firstOffset: bigint;
}

/** Whether a control batch is an ABORT marker (its key: int16 version, int16 type; type 0 = ABORT). */
function isAbortMarker(batch: BatchHead): boolean {
  return isAbortMarkerKey(batch.records[0]?.key);
}

/** A batch as the rule reads it: its last offset stands for its records (one producer, one transaction each). */
const view = (b: BatchHead): FetchedRecordView => {
  const control = (b.attributes & CONTROL_BATCH) !== 0;
  return {
    offset: Number(b.firstOffset) + b.lastOffsetDelta,
    producerId: String(b.producerId),
    transactional: (b.attributes & TRANSACTIONAL_BATCH) !== 0,
    control,
    abortMarker: control && isAbortMarker(b),
  };
};

/**
 * Which batches carry records to deliver: `true` at index i when `batches[i]` is a data
 * batch that is not part of an aborted transaction (Kafka's rule, adapters/shared/read_committed.ts).
 * Control batches and aborted batches are `false`. `batches` must be in offset order (as a
 * fetch returns them); `aborted` may be in any order. With `readCommitted` false only
 * control batches are dropped.
 */
export function deliverableBatches(
  batches: readonly BatchHead[],
  aborted: readonly AbortedTransaction[] | null | undefined,
  readCommitted = true,
): boolean[] {
  const out = batches.map((b) => (b.attributes & CONTROL_BATCH) === 0);
  for (const i of abortedIndices(batches, readCommitted ? aborted : null, view)) out[i] = false;
  return out;
}
