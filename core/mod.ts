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
  TopicPartition,
} from "./consumer/client.ts";
export {
  type CommitMode,
  type CommitOptions,
  CommitScheduler,
  type CommitSchedulerHooks,
  CommitTimeoutError,
} from "./consumer/commit_scheduler.ts";
export {
  type AvailableEvent,
  type ClusterHooks,
  type ClusterMetrics,
  type ClusterOptions,
  type ClusterState,
  ClusterWatch,
  type UnavailableEvent,
} from "./consumer/cluster.ts";
export {
  ClusterRefusedError,
  ClusterUnavailableError,
  type RefusalKind,
} from "./errors.ts";
export {
  type DispatchHooks,
  Dispatcher,
  Fifo,
  type DispatchOptions,
  Lane,
  type Ordering,
  resolveDispatchOptions,
  type ResolvedDispatchOptions,
  Work,
} from "./consumer/dispatcher.ts";
export {
  type ClaimEvent,
  type CommitEvent,
  type ConsumerEvents,
  type ConsumerListeners,
  type ConsumerMetrics,
  type DeadLetterEvent,
  type ErrorEvent,
  EventHub,
  type Listener,
  type PartitionMetrics,
  type PartitionState,
  type PauseEvent,
  type ResumeEvent,
  type RetryEvent,
  type StallEvent,
} from "./consumer/metrics.ts";
export {
  backoffDelay,
  canRetry,
  type OnExhausted,
  type ResolvedRetryPolicy,
  resolveRetryPolicy,
  type RetryPolicy,
} from "./consumer/retry.ts";
export {
  RateGate,
  type RateLimitOptions,
  resolveRateLimit,
  type ResolvedRateLimit,
  TokenBucket,
} from "./consumer/rate_limit.ts";
export {
  resolveStuckOptions,
  type ResolvedStuckOptions,
  type StuckAction,
  type StuckEvent,
  type StuckOptions,
  StuckRecordError,
  StuckWatch,
} from "./consumer/stuck.ts";
export {
  type BatchContext,
  type BatchHandler,
  type BatchOptions,
  type BatchResult,
  resolveBatchOptions,
  type ResolvedBatchOptions,
} from "./consumer/batch.ts";
export { parseRetryAfter, requestedDelay, RetryAfterError, retryDelay } from "./consumer/retry_after.ts";
export {
  checkOutput,
  claimEnd,
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
  TransactionStage,
} from "./consumer/transactions.ts";
export {
  type ConsumerState,
  type Handler,
  ParallelConsumer,
  type ParallelConsumerOptions,
  PartitionStoppedError,
  type RecordContext,
  type TransactionalContext,
} from "./consumer/runner.ts";
