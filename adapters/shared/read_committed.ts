/**
 * Kafka's `read_committed` rule for one fetched partition, client-neutral: which records
 * belong to aborted transactions. It is the rule of Kafka's Java consumer (KIP-98): the
 * fetch response lists the aborted transactions that overlap the fetched range as
 * (producer id, first offset); ordered by first offset, each one opens at its first offset
 * and stays open for its producer until that producer's ABORT control marker. A
 * transactional record of a producer with an open aborted transaction is aborted; control
 * records are never records of the log's readers.
 *
 * The broker lists aborted transactions in the order they *ended*, not by first offset,
 * and several may open before the same record: a reader that takes the list as it comes,
 * one entry per record (KafkaJS 2.2.4's `filterAbortedMessages`), lets records of
 * interleaved aborted transactions through and can hold a producer open past its marker.
 *
 * @module
 */

/** An aborted transaction as a fetch response lists it. */
export interface AbortedTransaction {
  /** The producer id (decimal string or number; compared as a decimal string). */
  readonly producerId: string | number | bigint;
  /** The transaction's first offset. */
  readonly firstOffset: string | number | bigint;
}

/** What the rule reads of one fetched record. */
export interface FetchedRecordView {
  /** The record's offset. */
  readonly offset: number;
  /** Its batch's producer id (decimal string). */
  readonly producerId: string;
  /** Its batch is transactional. */
  readonly transactional: boolean;
  /** Its batch is a control batch (a transaction marker). */
  readonly control: boolean;
  /** A control record that ends its producer's transaction as aborted. */
  readonly abortMarker: boolean;
}

/**
 * The indices (ascending) of the records of aborted transactions among `records`, the
 * fetched records of one partition in offset order (control records included: their ABORT
 * markers end a producer's aborted transaction).
 *
 * @param records the partition's fetched records, in offset order
 * @param aborted the fetch response's aborted transactions for the partition (any order;
 *   `null`/`undefined`/empty: none, as for a `read_uncommitted` fetch)
 * @param view what the rule reads of a record
 * @example
 * ```ts
 * // A begins (0), B begins (1), B aborts (2), A's second record (3), A aborts (4), a plain record (5)
 * const r = (offset: number, producerId: string, transactional = true, control = false) =>
 *   ({ offset, producerId, transactional, control, abortMarker: control });
 * const log = [r(0, "A"), r(1, "B"), r(2, "B", true, true), r(3, "A"), r(4, "A", true, true), r(5, "-1", false)];
 * abortedIndices(log, [{ producerId: "B", firstOffset: 1 }, { producerId: "A", firstOffset: 0 }], (x) => x);
 * // → [0, 1, 3]
 * ```
 */
export function abortedIndices<R>(
  records: readonly R[],
  aborted: readonly AbortedTransaction[] | null | undefined,
  view: (record: R) => FetchedRecordView,
): number[] {
  const out: number[] = [];
  if (!aborted || aborted.length === 0) return out;
  const starts = aborted
    .map((a) => ({ producerId: String(a.producerId), firstOffset: Number(a.firstOffset) }))
    .sort((a, b) => a.firstOffset - b.firstOffset);
  const open = new Set<string>();
  let next = 0;
  for (let i = 0; i < records.length; i++) {
    const r = view(records[i]);
    // every aborted transaction that began at or before this record is open from here on
    while (next < starts.length && starts[next].firstOffset <= r.offset) open.add(starts[next++].producerId);
    if (r.control) {
      if (r.abortMarker) open.delete(r.producerId);
    } else if (r.transactional && open.has(r.producerId)) {
      out.push(i);
    }
  }
  return out;
}

/**
 * Whether a control record's key says ABORT: the key is (version int16, type int16),
 * type 0 = ABORT, 1 = COMMIT.
 */
export function isAbortMarkerKey(key: Uint8Array | null | undefined): boolean {
  return key != null && key.length >= 4 && key[2] === 0 && key[3] === 0;
}
