/**
 * `read_committed` done right for KafkaJS 2.2.4. Its filter (`filterAbortedMessages`)
 * takes the fetch response's aborted transactions in the order the broker lists them (the
 * order they ended) and opens one per record, so records of interleaved aborted
 * transactions reach `batch.messages`. KafkaJS exposes neither the list nor a hook, so the
 * binding wraps KafkaJS's `Broker.prototype.fetch` once per process: each fetched
 * partition is put through Kafka's own rule ({@link abortedIndices}) before KafkaJS builds
 * its `Batch`. A record of an aborted transaction is marked a control record (KafkaJS then
 * leaves it out of `batch.messages` while `batch.lastOffset()` still counts it, as for
 * transaction markers) and the list is emptied, so KafkaJS's own filter has nothing left
 * to get wrong. Every KafkaJS consumer of the process reads correctly from then on.
 *
 * Each corrected partition's raw message list carries a mark. A batch of transactional
 * records without it (a KafkaJS copy this module could not reach) is refused with
 * {@link UnverifiedTransactionsError}, never handed on unverified.
 *
 * @module
 */
import { createRequire } from "node:module";
import { abortedIndices, type AbortedTransaction, type FetchedRecordView, isAbortMarkerKey } from "../shared/read_committed.ts";
import { UnverifiedTransactionsError } from "../../core/errors.ts";

/** Marks a raw message list put through Kafka's rule (shared by every copy of this module). */
const CORRECTED = Symbol.for("offset-frontier.kafkajs.read-committed");

/** A record as KafkaJS's fetch decodes it (the fields the rule reads). */
export interface KafkaJSRawMessage {
  offset: string;
  key: Uint8Array | null;
  isControlRecord?: boolean;
  batchContext?: { producerId?: string; inTransaction?: boolean; isControlBatch?: boolean };
}

/** One partition of a KafkaJS fetch response. */
export interface KafkaJSFetchedPartition {
  abortedTransactions?: AbortedTransaction[] | null;
  messages?: KafkaJSRawMessage[];
}

const view = (m: KafkaJSRawMessage): FetchedRecordView => {
  const b = m.batchContext;
  const control = b?.isControlBatch === true || m.isControlRecord === true;
  return {
    offset: Number(m.offset),
    producerId: b?.producerId ?? "-1",
    transactional: b?.inTransaction === true,
    control,
    abortMarker: control && isAbortMarkerKey(m.key),
  };
};

/**
 * Applies Kafka's rule to one fetched partition in place (see the module doc) and marks
 * its message list as corrected.
 */
export function correctFetchedPartition(partition: KafkaJSFetchedPartition): void {
  const messages = partition.messages;
  if (!Array.isArray(messages)) return;
  for (const i of abortedIndices(messages, partition.abortedTransactions, view)) messages[i].isControlRecord = true;
  partition.abortedTransactions = [];
  if (!Object.prototype.hasOwnProperty.call(messages, CORRECTED)) Object.defineProperty(messages, CORRECTED, { value: true });
}

type FetchResponse = { responses?: { partitions?: KafkaJSFetchedPartition[] }[] };
type Fetch = (this: unknown, ...args: unknown[]) => Promise<FetchResponse>;

let installed: "yes" | string | undefined;

/**
 * Wraps KafkaJS's `Broker.prototype.fetch` (once per process and KafkaJS copy) so every
 * fetched partition goes through {@link correctFetchedPartition}. Returns `"yes"`, or why
 * it could not (then transactional records are refused by {@link checkCorrected}).
 * @param resolveFrom where to resolve `kafkajs` from (default: this module)
 */
export function installReadCommitted(resolveFrom: string | URL = import.meta.url): "yes" | string {
  if (installed !== undefined) return installed;
  try {
    const require = createRequire(resolveFrom);
    const Broker = require("kafkajs/src/broker/index.js") as { prototype: { fetch: Fetch & { [CORRECTED]?: true } } };
    const original = Broker.prototype.fetch;
    if (typeof original !== "function") throw new Error("kafkajs/src/broker has no fetch method");
    if (!original[CORRECTED]) {
      const fetch = async function (this: unknown, ...args: unknown[]): Promise<FetchResponse> {
        const response = await original.apply(this, args);
        for (const topic of response?.responses ?? []) for (const p of topic.partitions ?? []) correctFetchedPartition(p);
        return response;
      };
      Object.defineProperty(fetch, CORRECTED, { value: true });
      Broker.prototype.fetch = fetch as typeof original;
    }
    installed = "yes";
  } catch (error) {
    installed = `KafkaJS's fetch could not be wrapped (${error instanceof Error ? error.message : String(error)})`;
  }
  return installed;
}

/** The parts of a KafkaJS batch the check reads. */
export interface KafkaJSBatchLike {
  readonly topic: string;
  readonly partition: number;
  readonly rawMessages?: readonly KafkaJSRawMessage[];
}

/**
 * Throws {@link UnverifiedTransactionsError} when `batch` holds transactional records and
 * its messages were not put through Kafka's rule; otherwise does nothing (one property
 * read for a corrected batch).
 */
export function checkCorrected(batch: KafkaJSBatchLike): void {
  const raw = batch.rawMessages;
  if (raw === undefined || (raw as { [CORRECTED]?: true })[CORRECTED]) return;
  if (!raw.some((m) => m.batchContext?.inTransaction === true)) return;
  throw new UnverifiedTransactionsError(
    batch.topic,
    batch.partition,
    `KafkaJS 2.2.4 can hand on records of aborted transactions (its filter assumes the broker lists them by first offset), and ${
      installed === "yes" ? "the KafkaJS copy that fetched them is not the one offset-frontier corrected" : installed ?? "the correction was not installed"
    }; use one KafkaJS copy, resolvable as "kafkajs" from offset-frontier, or another client`,
  );
}
