/**
 * The `@platformatic/kafka` binding of the parallel consumer (`offset-frontier/platformatic`),
 * on Node (≥ 22.22 or ≥ 24.6, as the client requires), Bun and Deno: its options and
 * factories. The binding drives the client's `Consumer` itself (group join, `fetch`,
 * OffsetCommit with metadata): see `client.ts`. Classic group protocol, eager assignors
 * (the client's default `roundrobin`); KIP-848 and cooperative-sticky are refused for now.
 * Exactly-once mode (`transactional`): see `transactions.ts`.
 *
 * @module
 */
import { openTelemetryTracing, type TracingOption } from "../shared/tracing.ts";
import process from "node:process";
import { InvalidArgumentError, UnsupportedRuntimeError } from "../../core/errors.ts";
import { type Handler, ParallelConsumer, type ParallelConsumerOptions } from "../../core/consumer/runner.ts";
import { checkKnownOptions, type OptionNames } from "../../core/consumer/known_options.ts";
import { checkConsumerOptions } from "../../core/consumer/runner_options.ts";
import { PlatformaticClient } from "./client.ts";
import { defined } from "../shared/defined.ts";
import { type PlatformaticDeadLetterOptions, topicOf, transactionalDeadLetter } from "./dead_letter.ts";
import { checkTransactionalOptions, type PlatformaticTransactionalOptions, PlatformaticTransactions } from "./transactions.ts";
import type { ClientConsumer, PlatformaticConsumer, PlatformaticMessage } from "./types.ts";
import { startWithSignals } from "../shared/signals.ts";
import type { ShutdownSignal } from "../shared/shutdown_signal.ts";

/** Options of a `@platformatic/kafka` parallel consumer. */
export interface PlatformaticConsumerOptions extends Omit<ParallelConsumerOptions<PlatformaticMessage>, "handler" | "transactional" | "tracing"> {
  /**
   * OpenTelemetry tracing (docs/tracing.md): each attempt in a span of its own, a child of the
   * record's `traceparent`. Default on when `@opentelemetry/api` is installed; `false`: off;
   * `{ tracer, links }`: the tracer, and new roots linked to the producer instead of children.
   */
  tracing?: TracingOption;
  /**
   * A `@platformatic/kafka` consumer, not joined: `new Consumer({ groupId, clientId,
   * bootstrapBrokers })` (classic group protocol, Buffer deserializers). The binding joins
   * the group and fetches; do not call its `consume()`.
   */
  consumer: PlatformaticConsumer;
  /** Topics (names) to subscribe to. */
  topics: readonly string[];
  /** Start from the earliest offset when the group has no committed offset (and after an out-of-range position). Default `false`. */
  fromBeginning?: boolean;
  /** Runs once per record (again on retries). Required unless `batch` gives a batch handler. */
  handler?: Handler<PlatformaticMessage>;
  /** Dead-letter producer; with it, records whose retries are used up are dead-lettered (see `retry.onExhausted`). */
  deadLetter?: PlatformaticDeadLetterOptions;
  /** Longest a Fetch waits on the broker for data, ms (a resume takes effect within it). Default 500. */
  maxWaitTime?: number;
  /** Most bytes fetched per partition per Fetch. Default 1 MiB. */
  maxBytesPerPartition?: number;
  /** Most bytes per Fetch. Default 50 MiB. */
  maxBytes?: number;
  /** Read only committed transactional records (Kafka's rule, applied by the binding). Default `true`. */
  readCommitted?: boolean;
  /**
   * Exactly-once mode: the handler's context gains `send(...)`; its records and the record's
   * completion commit in one transaction (one transactional producer per assigned partition,
   * id `<prefix>-<topic>-<partition>`, the offsets sent under the group generation;
   * `producers: "member"`, one producer per member, is refused). Dead
   * letters then go in the record's transaction (the `deadLetter` producer is not used).
   * Needs `readCommitted` (the default).
   */
  transactional?: PlatformaticTransactionalOptions;
}

/** The binding's own option names, besides the runner's. */
const PLATFORMATIC_OPTION_NAMES: OptionNames<
  Pick<
    PlatformaticConsumerOptions,
    "consumer" | "topics" | "fromBeginning" | "deadLetter" | "maxWaitTime" | "maxBytesPerPartition" | "maxBytes" | "readCommitted" | "transactional"
  >
> = {
  consumer: true, topics: true, fromBeginning: true, deadLetter: true, maxWaitTime: true, maxBytesPerPartition: true, maxBytes: true,
  readCommitted: true, transactional: true,
};
const DEAD_LETTER_OPTION_NAMES: OptionNames<PlatformaticDeadLetterOptions> = { producer: true, topic: true };
const TRANSACTIONAL_OPTION_NAMES: OptionNames<PlatformaticTransactionalOptions> = { timeoutMs: true, idPrefix: true, transactionTimeoutMs: true, producers: true };

/** Throws on a Node older than the client supports (it crashes there). */
function checkRuntime(): void {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined || g.Deno !== undefined) return;
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 24 || (major === 24 && minor >= 6) || (major === 22 && minor >= 22) || major === 23) return;
  throw new UnsupportedRuntimeError(
    "node",
    `@platformatic/kafka needs Node >= 22.22 or >= 24.6; this is Node ${process.versions.node}: use the KafkaJS binding (offset-frontier/node) here`,
  );
}

/**
 * A parallel consumer over a `@platformatic/kafka` consumer, not started yet: call `start()`,
 * stop through `signal` (or `shutdown()`), and await `done`.
 *
 * @example
 * ```ts
 * import { Consumer } from "@platformatic/kafka";
 * import { createPlatformaticConsumer } from "offset-frontier/platformatic";
 * const consumer = createPlatformaticConsumer({
 *   consumer: new Consumer({ groupId: "orders", clientId: "orders-worker", bootstrapBrokers: ["127.0.0.1:9092"] }),
 *   topics: ["orders"],
 *   ordering: "key",
 *   handler: async (message, { partition, offset }) => { console.log(partition, offset, message.value?.toString()); },
 * });
 * await consumer.start();
 * ```
 * @throws {UnsupportedRuntimeError} on Node older than 22.22
 */
export function createPlatformaticConsumer(options: PlatformaticConsumerOptions): ParallelConsumer<PlatformaticMessage> {
  checkRuntime();
  checkConsumerOptions(options, PLATFORMATIC_OPTION_NAMES);
  checkKnownOptions("options.deadLetter", options.deadLetter, DEAD_LETTER_OPTION_NAMES);
  checkKnownOptions("options.transactional", options.transactional, TRANSACTIONAL_OPTION_NAMES);
  const { consumer, topics, fromBeginning, deadLetter, maxWaitTime, maxBytesPerPartition, maxBytes, readCommitted, transactional, tracing, ...others } = options;
  const rest = { ...others, ...defined({ tracing: openTelemetryTracing<PlatformaticMessage>(tracing, () => consumer?.groupId) }) };
  if (transactional !== undefined) {
    if (readCommitted === false) {
      throw new InvalidArgumentError("transactional (exactly-once) needs readCommitted: a read_uncommitted consumer would process outputs of aborted transactions");
    }
    checkTransactionalOptions(transactional); // before the client takes the consumer: a refusal takes nothing
    // The port opens (fences) each partition before reading its committed offsets and seeking: the client reads none.
    const deadLetterTopics = deadLetter && Array.isArray(topics) ? topics.map(topicOf(deadLetter.topic)) : undefined;
    const client = new PlatformaticClient(
      consumer,
      topics,
      defined({ fromBeginning, maxWaitTime, maxBytesPerPartition, maxBytes, deadLetterTopics, transactional: true }),
    );
    const port = new PlatformaticTransactions({
      consumer: consumer as unknown as ClientConsumer,
      membership: () => client.membership(),
      seek: (positions, unknownOnly) => client.seek(positions, unknownOnly),
      fromBeginning: fromBeginning ?? false,
      ...defined({
        deadLetter: deadLetter && transactionalDeadLetter(deadLetter),
        alsoClose: deadLetter?.producer as { close(): Promise<unknown> } | undefined,
      }),
    }, transactional);
    return new ParallelConsumer<PlatformaticMessage>(client, { ...rest, transactional: { ...transactional, port } });
  }
  const client = new PlatformaticClient(consumer, topics, defined({ fromBeginning, deadLetter, maxWaitTime, maxBytesPerPartition, maxBytes, readCommitted }));
  return new ParallelConsumer<PlatformaticMessage>(client, rest);
}

/** Options of {@link consume}: the consumer options plus the signals that shut it down. */
export interface ConsumePlatformaticOptions extends PlatformaticConsumerOptions {
  /** Default `["SIGINT", "SIGTERM"]`; `[]` installs no handler. */
  signals?: readonly ShutdownSignal[];
}

/**
 * Starts a `@platformatic/kafka` parallel consumer that shuts down gracefully on
 * SIGINT/SIGTERM (a second signal gets the runtime's default: exit at once) or when
 * `signal` aborts. Resolves once consuming has begun.
 */
export async function consume(options: ConsumePlatformaticOptions): Promise<ParallelConsumer<PlatformaticMessage>> {
  const { signals = ["SIGINT", "SIGTERM"], ...rest } = options;
  return await startWithSignals(createPlatformaticConsumer(rest), signals);
}

export { PlatformaticClient, type PlatformaticClientOptions } from "./client.ts";
export { CommitNotAcknowledgedError } from "./errors.ts";
export type { PlatformaticDeadLetterOptions } from "./dead_letter.ts";
export type { Bytes, ClientMessage, PlatformaticConsumer, PlatformaticMessage, PlatformaticProducer } from "./types.ts";
export * from "../shared/consumer_api.ts";
export type { ShutdownSignal } from "../shared/shutdown_signal.ts";
export type { FetchSettings } from "./fetcher.ts";
export { type PlatformaticProducerStats, type PlatformaticTransactionalOptions, PlatformaticTransactions } from "./transactions.ts";
export { isFenced } from "./transaction_steps.ts";
export { type OutputRecord, type TransactionalContext, type TransactionEvent, type TransactionMetrics } from "../../core/mod.ts";
export type { CommitFailure } from "./commit_response.ts";
export type { OpenTelemetryTracer, TracingOption, TracingOptions } from "../shared/tracing.ts";
