/**
 * The part of `@confluentinc/kafka-javascript`'s KafkaJS-compatible API (`KafkaJS.Kafka`,
 * its consumer and producer, version 1.x) that the Confluent binding uses, declared here
 * structurally so the binding type-checks without the package installed (it is an
 * optional peer dependency that builds a native addon). A real `new KafkaJS.Kafka(…)`,
 * its producers and its messages fit these types.
 *
 * @module
 */
import type { Buffer } from "node:buffer";

/** Header values as the client delivers and accepts them. */
export type ConfluentHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>;

/** A record as the Confluent client's `eachBatch` delivers it (KafkaJS shape; offsets are decimal strings). */
export interface ConfluentMessage {
  /** The record key (`null`: none). */
  key: Buffer | null;
  /** The record value (`null`: tombstone). */
  value: Buffer | null;
  /** Milliseconds since the epoch, as a decimal string. */
  timestamp: string;
  /** Record attributes (the client reports 0). */
  attributes: number;
  /** The offset, as a decimal string. */
  offset: string;
  /** Record headers. */
  headers?: ConfluentHeaders;
  /** The leader epoch the record was fetched under, when known. */
  leaderEpoch?: number;
}

/** One partition of one topic, as the client names it. */
export interface ConfluentTopicPartition {
  /** Topic name. */
  topic: string;
  /** Partition number. */
  partition: number;
}

/**
 * A partition of an assignment as the rebalance callback may hand it back to the client: the
 * client then starts fetching it at `offset` (`-2` the earliest, `-1` the latest) instead of
 * looking its committed offset up itself; without `offset` it does the lookup.
 */
export interface ConfluentStartingPartition extends ConfluentTopicPartition {
  /** Where fetching starts (absent: the client reads the committed offset itself). */
  offset?: number;
}

/** A partition's committed offset and metadata as `consumer.committed()` returns them. */
export interface ConfluentCommitted extends ConfluentTopicPartition {
  /** The committed offset as a decimal string (negative: none). */
  offset: string;
  /** The metadata stored with it. */
  metadata?: string | null;
}

/** What `eachBatch` receives (the parts the binding uses). */
export interface ConfluentEachBatchPayload {
  /** The batch of one partition. */
  batch: {
    topic: string;
    partition: number;
    messages: ConfluentMessage[];
    lastOffset(): string;
    /** librdkafka's cached high watermark of the partition (from its last fetch), `"-1001"` when unknown. */
    highWatermark?: string;
  };
  /** Marks the batch consumed up to `offset`: the client then fetches past it. */
  resolveOffset(offset: string): void;
}

/** The librdkafka error the rebalance callback and commit events carry. */
export interface ConfluentRebalanceError {
  /** -175 (`ERR__ASSIGN_PARTITIONS`) or -174 (`ERR__REVOKE_PARTITIONS`) in the rebalance callback. */
  code: number;
  /** The error text. */
  message?: string;
}

/** The helpers the client hands the rebalance callback. */
export interface ConfluentAssignmentFns {
  /** `true` when the partitions being revoked were lost (session expired, fenced). */
  assignmentLost(): boolean;
}

/** A Confluent KafkaJS-compatible consumer (from `kafka.consumer(config)`). */
export interface ConfluentConsumer {
  /** Connects. */
  connect(): Promise<void>;
  /** Leaves the group and disconnects. */
  disconnect(): Promise<void>;
  /** Subscribes to topics (names or patterns). */
  subscribe(subscription: { topics: Array<string | RegExp> }): Promise<void>;
  /** Starts consuming; resolves once the consume loop started. */
  run(config: {
    eachBatchAutoResolve?: boolean;
    partitionsConsumedConcurrently?: number;
    eachBatch: (payload: ConfluentEachBatchPayload) => Promise<void>;
  }): Promise<void>;
  /** Stops fetching partitions (topics with optional partition lists). */
  pause(topics: Array<{ topic: string; partitions?: number[] }>): void;
  /** Fetches partitions again. */
  resume(topics: Array<{ topic: string; partitions?: number[] }>): void;
  /** Hands a commit to librdkafka: resolves once it is queued, NOT when the broker acknowledged it. */
  commitOffsets(offsets: Array<ConfluentTopicPartition & { offset: string; metadata?: string | null }>): Promise<void>;
  /** Reads the group's committed offsets and metadata. */
  committed(partitions: ConfluentTopicPartition[], timeout?: number): Promise<ConfluentCommitted[]>;
  /** Moves a partition's fetch position (`offset` as a decimal string; `"-2"`: the earliest). */
  seek(position: ConfluentTopicPartition & { offset: string }): void;
  /** The current assignment. */
  assignment(): ConfluentTopicPartition[];
  /** An admin client over the consumer's own connections (connect it after the consumer). */
  dependentAdmin?(): ConfluentAdmin;
}

/** The part of Confluent's KafkaJS-compatible admin client the binding uses. */
export interface ConfluentAdmin {
  /** Connects (the consumer must be connected). */
  connect(): Promise<void>;
  /** Disconnects. */
  disconnect(): Promise<void>;
  /** Every partition's offsets of `topic` (ListOffsets latest and earliest; `READ_UNCOMMITTED` by default: `high` is the high watermark). */
  fetchTopicOffsets(topic: string, options?: { timeout?: number }): Promise<Array<{ partition: number; offset: string; high: string; low: string }>>;
}

/** A Confluent KafkaJS-compatible producer (from `kafka.producer(config)`). */
export interface ConfluentProducer {
  /** Connects. */
  connect(): Promise<void>;
  /** Flushes and disconnects. */
  disconnect(): Promise<void>;
  /** Produces; resolves with each record's metadata once delivered (acknowledged per the producer's `acks`). */
  send(record: {
    topic: string;
    messages: Array<{ key?: Buffer | string | null; value: Buffer | string | null; headers?: ConfluentHeaders; timestamp?: string }>;
  }): Promise<Array<{ errorCode: number; partition: number; offset?: string }>>;
}

/** The consumer configuration: librdkafka properties and/or a `kafkaJS` block, as `kafka.consumer()` takes it. */
export type ConfluentConsumerConfig = Record<string, unknown> & { kafkaJS?: Record<string, unknown> };

/** A Confluent `KafkaJS.Kafka` client (`new KafkaJS.Kafka({ kafkaJS: { brokers } })`). */
export interface ConfluentKafka {
  /**
   * Creates a consumer; the binding passes a {@link ConfluentConsumerConfig}. The parameter
   * is `never` so that the client's own declaration fits whatever its config type (with
   * `Record<string, unknown>` here, `new KafkaJS.Kafka(…)` of the package's own typings was
   * rejected: TS2322, its `kafkaJS` block requires a `groupId`).
   */
  consumer(config: never): ConfluentConsumer;
}
