/**
 * offset-frontier: safe offset commits for parallel Kafka consumers.
 *
 * A consumer that hands records to concurrent workers sees them finish out of order;
 * the only safe commit for a partition is the end of the completed prefix of what
 * was delivered. A {@link Tracker} follows that prefix for one partition assignment;
 * a {@link Frontier} holds every assignment of a consumer and proposes the commits.
 * A {@link ParallelConsumer} runs an async handler over a Kafka client's records on a
 * worker pool (ordering by partition, key or none; bounded in-flight work; retries and
 * dead letters) and commits only those safe positions; `offset-frontier/node`, `/bun`
 * and `/deno` wire it to KafkaJS.
 *
 * @example
 * ```ts
 * import { Tracker } from "offset-frontier";
 * const t = new Tracker({ start: 100 });
 * const first = t.register([100, 104, 105], 106);
 * t.complete(first + 2);
 * t.safe; // 100: offset 100 is unfinished
 * t.complete(first);
 * t.safe; // 104
 * ```
 *
 * What this module exports is what the README and its docs/ pages document: the tracker (as
 * `offset-frontier/tracker` has it), the {@link ParallelConsumer} with its options,
 * events, metrics and errors, and the port a client binding implements
 * ({@link ConsumerClient}, and {@link TransactionalPort} for exactly-once). The runner's
 * machinery (dispatcher, commit scheduler, cluster watch, event hub) is not a promise.
 *
 * @module
 */
export * from "./tracker/mod.ts";
export { UnsupportedRuntimeError } from "./errors.ts";
export type {
  ClientSink,
  CommitOffset,
  CommittedPosition,
  ConsumerClient,
  DeadLetterInfo,
  DeliveredBatch,
  EndOffset,
  ProbeResult,
  RevokeOptions,
  TopicPartition,
} from "./consumer/port/mod.ts";
export { type CommitMode, type CommitOptions, CommitTimeoutError } from "./consumer/commits/mod.ts";
export {
  type AvailableEvent,
  type ClusterMetrics,
  type ClusterOptions,
  type ClusterState,
  type UnavailableEvent,
} from "./consumer/port/mod.ts";
export {
  ClusterRefusedError,
  ClusterUnavailableError,
  type RefusalKind,
  ShutdownCommitError,
  StartInterruptedError,
  type UncommittedPartition,
} from "./errors.ts";
export { type ConsumerLogger, type LogFields } from "./consumer/port/mod.ts";
export type { DispatchOptions, Ordering } from "./consumer/dispatch/mod.ts";
export {
  type ClaimEvent,
  type CommitEvent,
  type ConsumerEvents,
  type ConsumerListeners,
  type ConsumerMetrics,
  type DeadLetterEvent,
  type ErrorEvent,
  type Listener,
  type PartitionMetrics,
  type PartitionState,
  type PauseEvent,
  type ResumeEvent,
  type RetryEvent,
  type StallEvent,
} from "./consumer/port/mod.ts";
export type { OnExhausted, RetryPolicy } from "./consumer/records/mod.ts";
export type { RateLimitOptions } from "./consumer/records/mod.ts";
export { type StuckAction, type StuckEvent, type StuckOptions, StuckRecordError } from "./consumer/records/mod.ts";
export type { BatchContext, BatchHandler, BatchOptions, BatchResult } from "./consumer/records/mod.ts";
export { parseRetryAfter, RetryAfterError } from "./consumer/records/mod.ts";
export {
  type OpenPartition,
  type OutputRecord,
  type PartitionTransaction,
  TransactionFailedError,
  type TransactionalOptions,
  type TransactionalPort,
  type TransactionalSend,
  type TransactionEvent,
  type TransactionMetrics,
  type TransactionOutcome,
} from "./consumer/port/mod.ts";
export { type RecordTracing, type TracedRecord, type TraceSpan, type TracingSource } from "./consumer/port/mod.ts";
export {
  type ConsumerState,
  type Handler,
  ParallelConsumer,
  type ParallelConsumerOptions,
  PartitionStoppedError,
  type RecordContext,
  type TransactionalContext,
} from "./consumer/runner.ts";
