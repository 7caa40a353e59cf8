/**
 * How every binding stores commit metadata on the broker: the string followed by one NUL
 * byte, so that a group can move between bindings.
 *
 * `@confluentinc/kafka-javascript` (1.10.1, its nan addon, `src/common.cc`) appends a NUL
 * to the metadata it commits (`FromV8Array`/`ToTopicPartition`: `metadataVector.push_back('\0')`)
 * and drops the last byte of the metadata it reads, whatever that byte is
 * (`TopicPartitionListToV8Array`: `get_metadata().size() - 1`); its admin `fetchOffsets`
 * reads the bytes as a C string and ran past the end of one without a NUL (measured here).
 * Its binding cannot change either side. So the KafkaJS and `@platformatic/kafka` bindings
 * write the same bytes Confluent's client writes ({@link toStored}) and drop that NUL when
 * they read ({@link fromStored}): what one binding committed, the others read back exactly.
 * Metadata committed without the NUL (by an older version, or another client) still reads
 * back unchanged through them; through the Confluent binding its last character is lost, so
 * a completed set there fails to verify and its records are redone, never skipped.
 *
 * The NUL costs one byte of the broker's `offset.metadata.max.bytes` (4,096 by default):
 * the runner's default completed-set budget is 4,095 characters.
 *
 * @module
 */

/** The metadata as a binding commits it: the string and one NUL (`undefined` stays none). */
export function toStored(metadata: string | undefined): string | undefined {
  return metadata === undefined ? undefined : metadata + "\u0000";
}

/** The metadata as stored, read back: one trailing NUL dropped (`null`/`undefined` stay none). */
export function fromStored<T extends string | null | undefined>(metadata: T): T {
  return (typeof metadata === "string" && metadata.endsWith("\u0000") ? metadata.slice(0, -1) : metadata) as T;
}
