/**
 * What every client binding's entry point re-exports of the core, so that a user imports
 * everything a consumer needs from that one entry (`offset-frontier/node`, `/bun`, `/deno`,
 * `/confluent`, `/platformatic`): the consumer, its handler and event types, the errors a
 * handler throws or meets, and the dead-letter headers. A binding adds its own factory,
 * client, options and errors (and KafkaJS its exactly-once types).
 *
 * @module
 */
export {
  type BatchContext,
  type BatchHandler,
  type BatchResult,
  type CommitEvent,
  type ConsumerEvents,
  type ConsumerMetrics,
  type DeadLetterEvent,
  type ErrorEvent,
  type Handler,
  type Ordering,
  ParallelConsumer,
  type PartitionMetrics,
  PartitionStoppedError,
  type PauseEvent,
  parseRetryAfter,
  type RecordContext,
  type ResumeEvent,
  RetryAfterError,
  type RetryEvent,
  UnsupportedRuntimeError,
} from "../../core/mod.ts";
export { DEAD_LETTER_HEADERS } from "./dead_letter_headers.ts";
