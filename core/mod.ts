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
export { Completion, type Engine, type EngineTracker } from "./engine.ts";
export { type EngineChoice, resolveEngine } from "./engines.ts";
export {
  CapacityError,
  EngineUnavailableError,
  InvalidArgumentError,
  InvalidBatchError,
  InvalidOffsetError,
  OffsetFrontierError,
  RevokedError,
} from "./errors.ts";
export {
  type CommitProposal,
  Frontier,
  type PartitionCommit,
  type PartitionPositions,
  type PartitionStats,
} from "./frontier.ts";
export { jsEngine } from "./js_engine.ts";
export { ready } from "./wasm_engine.ts"; // importing it registers the WASM engine: "auto" means WASM
export { OFFSET_LIMIT, type OffsetInput, toOffset } from "./offset.ts";
export { DEFAULT_CAPACITY, type Handle, MAX_CAPACITY, Tracker, type TrackerOptions, type TrackerStats } from "./tracker.ts";
export type {
  ClientSink,
  CommitOffset,
  ConsumerClient,
  DeadLetterInfo,
  DeliveredBatch,
  TopicPartition,
} from "./client.ts";
export {
  type CommitMode,
  type CommitOptions,
  CommitScheduler,
  type CommitSchedulerHooks,
  CommitTimeoutError,
} from "./commit_scheduler.ts";
export {
  type DispatchHooks,
  Dispatcher,
  type DispatchOptions,
  Lane,
  type Ordering,
  resolveDispatchOptions,
  type ResolvedDispatchOptions,
  Work,
} from "./dispatcher.ts";
export {
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
} from "./metrics.ts";
export {
  backoffDelay,
  canRetry,
  type OnExhausted,
  type ResolvedRetryPolicy,
  resolveRetryPolicy,
  type RetryPolicy,
} from "./retry.ts";
export {
  type ConsumerState,
  type Handler,
  ParallelConsumer,
  type ParallelConsumerOptions,
  PartitionStoppedError,
  type RecordContext,
} from "./runner.ts";
