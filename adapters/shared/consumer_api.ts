/**
 * What every client binding's entry point re-exports of the core, so that a user imports
 * everything a consumer needs from that one entry (`offset-frontier/node`, `/bun`, `/deno`,
 * `/confluent`, `/platformatic`): the consumer, its handler and event types, the errors a
 * handler throws or meets, the errors a start or shutdown throws or reports (a refusal, an
 * unreachable cluster, a start cut short, bad options), the logger's type, and the
 * dead-letter headers. A binding adds its own factory,
 * client, options and errors (and KafkaJS its exactly-once types).
 *
 * @module
 */
export {
  type AvailableEvent,
  type BatchContext,
  type BatchHandler,
  type BatchResult,
  ClusterRefusedError,
  ClusterUnavailableError,
  type CommitEvent,
  type ConsumerEvents,
  type ConsumerLogger,
  type ConsumerMetrics,
  type DeadLetterEvent,
  type ErrorEvent,
  type Handler,
  InvalidArgumentError,
  type LogFields,
  OffsetFrontierError,
  type Ordering,
  ParallelConsumer,
  type PartitionMetrics,
  PartitionStoppedError,
  type PauseEvent,
  parseRetryAfter,
  type RecordContext,
  type RefusalKind,
  type ResumeEvent,
  RetryAfterError,
  type RetryEvent,
  ShutdownCommitError,
  StartInterruptedError,
  type UnavailableEvent,
  UnsupportedRuntimeError,
} from "../../core/mod.ts";
export { DEAD_LETTER_HEADERS } from "./dead_letter_headers.ts";
