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
export function isAbortMarker(batch: BatchHead): boolean {
  const key = batch.records[0]?.key;
  if (!key || key.byteLength < 4) return false;
  return new DataView(key.buffer, key.byteOffset, key.byteLength).getInt16(2) === 0;
}

/**
 * Which batches carry records to deliver: `true` at index i when `batches[i]` is a data
 * batch that is not part of an aborted transaction. Control batches and aborted batches
 * are `false`. `batches` must be in offset order (as a fetch returns them); `aborted` may
 * be in any order (it is sorted by first offset here, not in place). With
 * `readCommitted` false only control batches are dropped.
 */
export function deliverableBatches(
  batches: readonly BatchHead[],
  aborted: readonly AbortedTransaction[] | null | undefined,
  readCommitted = true,
): boolean[] {
  const out = new Array<boolean>(batches.length);
  const pending = readCommitted && aborted && aborted.length > 0
    ? [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
    : [];
  let next = 0; // the first aborted transaction not yet begun
  const abortedProducers = new Set<bigint>(); // producers inside an aborted transaction
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i];
    const control = (b.attributes & CONTROL_BATCH) !== 0;
    if (readCommitted && b.producerId >= 0n) {
      // Every aborted transaction that began at or before this batch's last offset is open now.
      const last = b.firstOffset + BigInt(b.lastOffsetDelta);
      while (next < pending.length && pending[next].firstOffset <= last) abortedProducers.add(pending[next++].producerId);
    }
    if (control) {
      if (readCommitted && isAbortMarker(b)) abortedProducers.delete(b.producerId);
      out[i] = false;
    } else {
      out[i] = !(readCommitted && (b.attributes & TRANSACTIONAL_BATCH) !== 0 && abortedProducers.has(b.producerId));
    }
  }
  return out;
}
