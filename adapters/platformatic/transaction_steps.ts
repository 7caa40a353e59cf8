/**
 * The steps of one `@platformatic/kafka` transaction that need no producer state: output
 * records as the client's messages, the fencing test on its errors, and the offsets with
 * their metadata (TxnOffsetCommit, sent by the binding through the package's exported API).
 *
 * Why the binding sends TxnOffsetCommit itself: the client's `Transaction.addOffset`
 * (dist/clients/producer/producer.js, `kTransactionCommitOffset`) sends it with
 * `committedMetadata: null` and the offset of a consumed message plus one, so the
 * completed set could not travel with the offset. The request below is the same one with
 * the metadata, under the producer's id and epoch and the transaction the client began
 * (its AddOffsetsToTxn sent first by `Transaction.addConsumer`), and with the group
 * generation and member id of the current assignment (KIP-447): the group coordinator
 * refuses the offsets of a member that is no longer in that generation.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { txnOffsetCommitV4 } from "@platformatic/kafka";
import type { OutputRecord } from "../../core/consumer/port/mod.ts";
import type { CommitOffset } from "../../core/consumer/port/mod.ts";
import { errorChain } from "../shared/error_chain.ts";
import { toStored } from "../shared/stored_metadata.ts";
import { coordinatorConnection } from "./group_requests.ts";
import type { Bytes, ClientConsumer, ClientProducer } from "./types.ts";

/**
 * Kafka's answers that mean another owner took over: another producer with the same
 * transactional id (its epoch is newer), or the group no longer has this member in this
 * generation (the TxnOffsetCommit of a zombie, KIP-447).
 */
const FENCED_IDS = new Set([
  "INVALID_PRODUCER_EPOCH",
  "PRODUCER_FENCED",
  "ILLEGAL_GENERATION",
  "UNKNOWN_MEMBER_ID",
  "FENCED_INSTANCE_ID",
]);

/**
 * A transaction's offsets were not sent because the assignment they belong to is no longer
 * the client's current generation (it rejoined, or the assignment ended): what the broker
 * would answer with ILLEGAL_GENERATION, found before asking it. A woken zombie meets it when
 * its client rejoined first.
 */
export class StaleGenerationError extends Error {
  /**
   * @param what the offsets that were not sent, e.g. "the offsets of t/0"
   */
  constructor(what: string) {
    super(`the group is rebalancing (no current generation): ${what} were not sent`);
    this.name = "StaleGenerationError";
  }
}

/** Whether a `@platformatic/kafka` error (or a cause, or an aggregate's error) says this producer or member was fenced. */
export function isFenced(error: unknown): boolean {
  return errorChain<{ apiId?: unknown }>(error, 20).some((e) =>
    e instanceof StaleGenerationError || (typeof e.apiId === "string" && FENCED_IDS.has(e.apiId))
  );
}

/** A message as the client's producer takes it (raw bytes: its default serializers pass them through). */
export interface ProducedMessage {
  readonly topic: string;
  readonly partition?: number;
  readonly key?: Bytes;
  readonly value?: Bytes;
  readonly headers?: Map<Bytes, Bytes>;
  readonly timestamp?: bigint;
}

const bytes = (v: string | Uint8Array): Buffer => typeof v === "string" ? Buffer.from(v) : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** An {@link OutputRecord} as a `@platformatic/kafka` message (a `null` key or value: none). */
export function toPlatformaticMessage(r: OutputRecord): ProducedMessage {
  let headers: Map<Buffer, Buffer> | undefined;
  if (r.headers) {
    headers = new Map();
    for (const [k, v] of Object.entries(r.headers)) headers.set(Buffer.from(k), bytes(v));
  }
  return {
    topic: r.topic,
    ...(r.partition !== undefined ? { partition: r.partition } : {}),
    ...(r.key != null ? { key: bytes(r.key) } : {}),
    ...(r.value !== null ? { value: bytes(r.value) } : {}),
    ...(headers ? { headers } : {}),
    ...(r.timestamp !== undefined ? { timestamp: BigInt(r.timestamp) } : {}),
  };
}

/** The group membership the offsets are committed under. */
export interface Membership {
  /** The generation of the current assignment. */
  readonly generationId: number;
  /** This member's id in it. */
  readonly memberId: string;
}

/**
 * Adds `offsets` (with their metadata, stored with the trailing NUL every binding writes)
 * to the transaction the producer has open, for the consumer's group, under `membership`.
 * Resolves when the group coordinator accepted every partition; rejects with the client's
 * error otherwise (a per-partition refusal is a `ResponseError` naming its code).
 */
export async function sendTxnOffsets(
  consumer: ClientConsumer,
  producer: ClientProducer,
  membership: Membership,
  offsets: readonly CommitOffset[],
): Promise<void> {
  const transaction = producer.transaction;
  const producerId = producer.producerId;
  const producerEpoch = producer.producerEpoch;
  if (!transaction || producerId === undefined || producerEpoch === undefined) {
    throw new Error("the producer has no transaction open: the offsets were not sent");
  }
  const topics = new Map<string, { name: string; partitions: Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }> }>();
  for (const o of offsets) {
    let t = topics.get(o.topic);
    if (!t) topics.set(o.topic, t = { name: o.topic, partitions: [] });
    t.partitions.push({ partitionIndex: o.partition, committedOffset: BigInt(o.offset), committedLeaderEpoch: -1, committedMetadata: toStored(o.metadata) ?? null });
  }
  const connection = await coordinatorConnection(consumer);
  await txnOffsetCommitV4.api.async(
    connection,
    transaction.id,
    consumer.groupId,
    producerId,
    producerEpoch,
    membership.generationId,
    membership.memberId,
    consumer.groupInstanceId ?? null,
    [...topics.values()],
  );
}
