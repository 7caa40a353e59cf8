/**
 * The KafkaJS (2.2.x) binding of the parallel consumer (`offset-frontier/kafkajs`), on
 * Node (20 included), Bun and Deno: its options, factories and `consume()`. KafkaJS is no
 * longer maintained upstream; where `@platformatic/kafka` runs (Node ≥ 22.22, Bun, Deno),
 * `offset-frontier/platformatic` is the binding to start with.
 *
 * How the binding drives KafkaJS: `client.ts`; outages and crash restarts: `outage.ts`;
 * the assignment: `assignment.ts`; the committed offsets and completed sets each new
 * assignment reads back, through the consumer's own connection: `joined_group.ts`;
 * exactly-once: `transactions.ts`.
 *
 * @module
 */
import process from "node:process";
import type { Consumer, Kafka, KafkaMessage } from "./types.ts";
import type { ShutdownSignal } from "../shared/shutdown_signal.ts";
import { KafkaJSClient, releaseUnstarted } from "./client.ts";
import { type DeadLetterOptions, transactionalDeadLetter } from "./dead_letter.ts";
import { type Handler, ParallelConsumer, type ParallelConsumerOptions } from "../../core/consumer/runner.ts";
import { checkKnownOptions, type OptionNames } from "../../core/consumer/known_options.ts";
import { checkConsumerOptions } from "../../core/consumer/runner_options.ts";
import { startConsuming } from "../../core/consumer/start_consuming.ts";
import { defined } from "../shared/defined.ts";
import { InvalidArgumentError } from "../../core/errors.ts";
import { type KafkaJSTransactionalOptions, KafkaJSTransactions } from "./transactions.ts";
import { openTelemetryTracing, type TracingOption } from "../shared/tracing.ts";

/** Options of a KafkaJS parallel consumer. */
export interface KafkaJSConsumerOptions extends Omit<ParallelConsumerOptions<KafkaMessage>, "handler" | "transactional" | "tracing"> {
  /**
   * A KafkaJS consumer from `kafka.consumer({ groupId, … })`, not connected yet. A
   * `maxWaitTimeInMs` of a few hundred ms makes resumes take effect sooner (KafkaJS
   * sleeps that long when every partition is paused).
   */
  consumer: Consumer;
  /**
   * The KafkaJS client that made `consumer`. Needed for `transactional`; otherwise optional:
   * with it, a consumer that gives up waiting for the cluster names the seed brokers it
   * tried. Each new assignment reads the partitions' committed offsets and metadata (the
   * completed sets) through `consumer`'s own connection, with or without `kafka`, so records
   * an earlier owner finished above the committed offset are skipped instead of redone;
   * only where that connection cannot be reached (a KafkaJS copy other than the one
   * offset-frontier resolves as `kafkajs`) does the read need `kafka`'s admin client, and
   * then a consumer without `kafka` is refused (`InvalidArgumentError`, at construction or
   * at its first join) instead of writing completed sets nobody reads back.
   */
  kafka?: Kafka;
  /** Topics (names or patterns) to subscribe to. */
  topics: ReadonlyArray<string | RegExp>;
  /** Start from the earliest offset when the group has no committed offset. Default `false`. */
  fromBeginning?: boolean;
  /** Runs once per record (again on retries): the KafkaJS message and its topic, partition, offset, attempt and signal. Required unless `batch` gives a batch handler. */
  handler?: Handler<KafkaMessage>;
  /**
   * Dead-letter producer; with it, records whose retries are used up are dead-lettered
   * (see `retry.onExhausted`). With `transactional` the dead letter goes in the record's
   * transaction instead and `producer` is not used.
   */
  deadLetter?: DeadLetterOptions;
  /**
   * Exactly-once consume → process → produce (needs `kafka`; refused without it): the handler's context gains
   * `send(...)`; its records and the record's completion commit in one transaction (one
   * transactional producer per assigned partition, id `<prefix>-<topic>-<partition>`).
   * Read the outputs with `read_committed` (KafkaJS's default).
   */
  transactional?: KafkaJSTransactionalOptions;
  /**
   * OpenTelemetry tracing (docs/tracing.md): each attempt in a span of its own, a child of the
   * record's `traceparent`. Default on when `@opentelemetry/api` is installed; `false`: off;
   * `{ tracer, links }`: the tracer, and new roots linked to the producer instead of children.
   */
  tracing?: TracingOption;
}

/** The binding's own option names, besides the runner's. */
const KAFKAJS_OPTION_NAMES: OptionNames<Pick<KafkaJSConsumerOptions, "consumer" | "kafka" | "topics" | "fromBeginning" | "deadLetter" | "transactional">> = {
  consumer: true, kafka: true, topics: true, fromBeginning: true, deadLetter: true, transactional: true,
};
const DEAD_LETTER_OPTION_NAMES: OptionNames<DeadLetterOptions> = { producer: true, topic: true };
const TRANSACTIONAL_OPTION_NAMES: OptionNames<KafkaJSTransactionalOptions> = {
  timeoutMs: true, groupId: true, idPrefix: true, transactionTimeoutMs: true, retry: true,
};

/**
 * A parallel consumer over a KafkaJS consumer, not started yet: call `start()`, stop
 * through `signal` (or `shutdown()`), and await `done`.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { createKafkaJSConsumer } from "offset-frontier/node";
 * const kafka = new Kafka({ brokers: ["127.0.0.1:9092"] });
 * const controller = new AbortController();
 * const consumer = createKafkaJSConsumer({
 *   consumer: kafka.consumer({ groupId: "orders", maxWaitTimeInMs: 500 }),
 *   topics: ["orders"],
 *   ordering: "key",
 *   concurrency: 100,
 *   handler: async (message, { partition, offset }) => { console.log(partition, offset, message.value?.toString()); },
 *   signal: controller.signal,
 * });
 * await consumer.start();
 * ```
 */
export function createKafkaJSConsumer(options: KafkaJSConsumerOptions): ParallelConsumer<KafkaMessage> {
  checkConsumerOptions(options, KAFKAJS_OPTION_NAMES);
  checkKnownOptions("options.deadLetter", options.deadLetter, DEAD_LETTER_OPTION_NAMES);
  checkKnownOptions("options.transactional", options.transactional, TRANSACTIONAL_OPTION_NAMES);
  const { consumer, kafka, topics, fromBeginning, deadLetter, transactional, tracing: traced, ...options_ } = options;
  let groupId: string | undefined; // from the joins (a KafkaJS consumer does not tell its group otherwise)
  const tracing = openTelemetryTracing<KafkaMessage>(traced, () => groupId);
  const rest = { ...options_, ...defined({ tracing }) };
  const joins = (): void => void (tracing && consumer.on(consumer.events.GROUP_JOIN, (e) => void (groupId = e.payload.groupId)));
  if (transactional !== undefined) {
    if (kafka === undefined) {
      // Refused before the client takes the consumer: a refused construction takes nothing.
      throw new InvalidArgumentError(
        "transactional mode needs kafka, the KafkaJS client that made consumer (new Kafka(…)): it makes the transactional producers and reads the committed offsets after fencing",
      );
    }
    // The port opens (fences) each partition before reading its committed offsets: the client reads none.
    const client = new KafkaJSClient(consumer, topics, defined({ fromBeginning, probe: kafka, readsCommitted: false }));
    return untakenIfRefused(consumer, () => {
      const port = new KafkaJSTransactions(kafka, consumer, transactional, {
        ...defined({ fromBeginning, deadLetter: deadLetter && transactionalDeadLetter(deadLetter) }),
      });
      const built = new ParallelConsumer<KafkaMessage>(client, { ...rest, transactional: { ...transactional, port } });
      joins(); // the consumer is a KafkaJS one (checked by the client), and it is this one's now
      return built;
    });
  }
  const client = new KafkaJSClient(consumer, topics, defined({ fromBeginning, deadLetter, kafka }));
  return untakenIfRefused(consumer, () => {
    const built = new ParallelConsumer<KafkaMessage>(client, rest);
    joins();
    return built;
  });
}

/** Builds the rest of a consumer around a binding; a refusal there leaves `consumer` free for another try. */
function untakenIfRefused<T>(consumer: Consumer, build: () => T): T {
  try {
    return build();
  } catch (error) {
    releaseUnstarted(consumer);
    throw error;
  }
}

/** {@link createKafkaJSConsumer}, started: resolves once consuming has begun. */
export async function runKafkaJS(options: KafkaJSConsumerOptions): Promise<ParallelConsumer<KafkaMessage>> {
  const consumer = createKafkaJSConsumer(options);
  await consumer.start();
  return consumer;
}

/**
 * Starts a KafkaJS parallel consumer that shuts down gracefully when `listen`'s
 * callback fires (a runtime's SIGINT/SIGTERM) or `options.signal` aborts. `listen`
 * installs the runtime's handlers and returns a function that removes them; they are
 * removed at the first signal (a second one then gets the runtime's default: exit at
 * once) and when the consumer stops. Used by the Node, Bun and Deno adapters. Rejects
 * with a `StartInterruptedError` when the shutdown came before consuming began.
 */
export async function consumeUntil(
  options: KafkaJSConsumerOptions,
  listen: (shutdown: () => void) => () => void,
): Promise<ParallelConsumer<KafkaMessage>> {
  const controller = new AbortController();
  const user = options.signal;
  const onUser = (): void => controller.abort(user?.reason);
  if (user?.aborted) controller.abort(user.reason);
  else user?.addEventListener("abort", onUser, { once: true });
  let unlisten: (() => void) | undefined;
  const release = (): void => {
    unlisten?.();
    unlisten = undefined;
  };
  unlisten = listen(() => {
    release();
    controller.abort(new Error("shutdown signal"));
  });
  const consumer = createKafkaJSConsumer({ ...options, signal: controller.signal });
  void consumer.closed.then(() => {
    release();
    user?.removeEventListener("abort", onUser);
  });
  await startConsuming(consumer);
  return consumer;
}

/** Options of {@link consume}: the KafkaJS consumer options plus the signals that shut it down. */
export interface ConsumeKafkaJSOptions extends KafkaJSConsumerOptions {
  /** Default `["SIGINT", "SIGTERM"]`; `[]` installs no handler. */
  signals?: readonly ShutdownSignal[];
}

/**
 * Starts a KafkaJS parallel consumer that shuts down gracefully on SIGINT/SIGTERM (a second
 * signal gets the runtime's default: exit at once) or when `signal` aborts; on Node, Bun
 * and Deno alike (each has `node:process` signals). Resolves once consuming has begun.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { consume } from "offset-frontier/kafkajs";
 * const kafka = new Kafka({ brokers: ["127.0.0.1:9092"] });
 * const consumer = await consume({
 *   consumer: kafka.consumer({ groupId: "orders", maxWaitTimeInMs: 500 }),
 *   topics: ["orders"],
 *   handler: async (message) => { console.log(message.value?.toString()); },
 * });
 * await consumer.done; // after Ctrl-C: in-flight records finished, safe offsets committed
 * ```
 */
export function consume(options: ConsumeKafkaJSOptions): Promise<ParallelConsumer<KafkaMessage>> {
  const { signals = ["SIGINT", "SIGTERM"], ...rest } = options;
  return consumeUntil(rest, (shutdown) => {
    for (const s of signals) process.once(s, shutdown);
    return () => {
      for (const s of signals) process.off(s, shutdown);
    };
  });
}

export { KafkaJSClient } from "./client.ts";
export type { ShutdownSignal } from "../shared/shutdown_signal.ts";
export type { Consumer, Kafka, KafkaMessage, Producer } from "./types.ts";
export type { DeadLetterOptions } from "./dead_letter.ts";
export type { OpenTelemetryTracer, TracingOption, TracingOptions } from "../shared/tracing.ts";
export * from "../shared/consumer_api.ts";
export { type OutputRecord, type TransactionalContext, type TransactionEvent, type TransactionMetrics } from "../../core/mod.ts";
export { type KafkaJSTransactionalOptions, KafkaJSTransactions, type TransactionalProducerStats } from "./transactions.ts";
export { isFenced, TransactionTimeoutError } from "./transaction_steps.ts";
