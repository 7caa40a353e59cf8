/**
 * The Confluent binding (Node only): the parallel consumer over
 * `@confluentinc/kafka-javascript`'s KafkaJS-compatible API (`KafkaJS.Kafka`, librdkafka
 * inside). Bun and Deno cannot load its native addon: importing this module there throws
 * an {@link UnsupportedRuntimeError}; use the KafkaJS binding (`offset-frontier/bun`,
 * `offset-frontier/deno`) instead.
 *
 * How the binding drives the client: `confluent_client.ts`.
 *
 * @module
 */
import { UnsupportedRuntimeError } from "../../core/errors.ts";
import { type Handler, ParallelConsumer, type ParallelConsumerOptions } from "../../core/consumer/runner.ts";
import { ConfluentClient } from "./client.ts";
import type { OptionNames } from "../../core/consumer/known_options.ts";
import { checkConsumerOptions } from "../../core/consumer/runner_options.ts";
import { defined } from "../shared/defined.ts";
import { openTelemetryTracing, type TracingOption } from "../shared/tracing.ts";
import type { ConfluentDeadLetterOptions } from "./dead_letter.ts";
import type { ConfluentConsumerConfig, ConfluentKafka, ConfluentMessage } from "./types.ts";
import { startWithSignals } from "../shared/signals.ts";
import type { ShutdownSignal } from "../shared/shutdown_signal.ts";

const g = globalThis as { Bun?: unknown; Deno?: unknown };
const foreign = g.Bun !== undefined ? "bun" : g.Deno !== undefined ? "deno" : undefined;
if (foreign !== undefined) {
  throw new UnsupportedRuntimeError(
    foreign,
    `offset-frontier/confluent runs on Node only: ${foreign === "bun" ? "Bun" : "Deno"} cannot load the native addon of ` +
      `@confluentinc/kafka-javascript; use the KafkaJS binding (offset-frontier/${foreign}) there`,
  );
}

/** Options of a Confluent parallel consumer. */
export interface ConfluentConsumerOptions extends Omit<ParallelConsumerOptions<ConfluentMessage>, "handler" | "tracing"> {
  /**
   * OpenTelemetry tracing (docs/tracing.md): each attempt in a span of its own, a child of the
   * record's `traceparent`. Default on when `@opentelemetry/api` is installed; `false`: off;
   * `{ tracer, links }`: the tracer, and new roots linked to the producer instead of children.
   */
  tracing?: TracingOption;
  /** The client: `new KafkaJS.Kafka({ kafkaJS: { brokers } })` from `@confluentinc/kafka-javascript`. */
  kafka: ConfluentKafka;
  /**
   * The consumer configuration, as `kafka.consumer()` takes it: librdkafka properties
   * (`"group.id"`, `"group.protocol": "consumer"`, `"partition.assignment.strategy"`,
   * `"js.consumer.max.batch.size"`, …) and/or a `kafkaJS` block. The binding sets
   * `enable.auto.commit: false` and the rebalance callback; it refuses a config that
   * turns auto-commit on or brings its own `rebalance_cb`.
   */
  config: ConfluentConsumerConfig;
  /** Topics (names or patterns) to subscribe to. */
  topics: ReadonlyArray<string | RegExp>;
  /** Start from the earliest offset when the group has no committed offset (`auto.offset.reset`). Default `false`. */
  fromBeginning?: boolean;
  /** Runs once per record (again on retries). Required unless `batch` gives a batch handler. */
  handler?: Handler<ConfluentMessage>;
  /** Dead-letter producer; with it, records whose retries are used up are dead-lettered (see `retry.onExhausted`). */
  deadLetter?: ConfluentDeadLetterOptions;
  /** How long to wait for librdkafka's outcome of a commit before it counts as failed. Default 60,000 ms. */
  commitOutcomeTimeoutMs?: number;
  /**
   * The longest the rebalance callback holds a revoke (drain and commit) before it lets
   * the partitions go anyway. Default `drainTimeoutMs` + 5,000 ms. Under the KIP-848
   * protocol librdkafka can hold a commit sent during the callback until the callback
   * returned; the bound keeps such a revoke from stalling the group for the commit timeouts.
   */
  revokeTimeoutMs?: number;
}


/** The binding's own option names, besides the runner's. */
const CONFLUENT_OPTION_NAMES: OptionNames<
  Pick<ConfluentConsumerOptions, "kafka" | "config" | "topics" | "fromBeginning" | "deadLetter" | "commitOutcomeTimeoutMs" | "revokeTimeoutMs">
> = { kafka: true, config: true, topics: true, fromBeginning: true, deadLetter: true, commitOutcomeTimeoutMs: true, revokeTimeoutMs: true };

/**
 * A parallel consumer over a Confluent consumer it creates from `kafka` and `config`, not
 * started yet: call `start()`, stop through `signal` (or `shutdown()`), and await `done`.
 *
 * @example
 * ```ts
 * import { KafkaJS } from "@confluentinc/kafka-javascript";
 * import { createConfluentConsumer } from "offset-frontier/confluent";
 * const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: ["127.0.0.1:9092"] } });
 * const consumer = createConfluentConsumer({
 *   kafka,
 *   config: { "group.id": "orders", "group.protocol": "consumer" },
 *   topics: ["orders"],
 *   ordering: "key",
 *   handler: async (message, { partition, offset }) => { console.log(partition, offset, message.value?.toString()); },
 * });
 * await consumer.start();
 * ```
 */
export function createConfluentConsumer(options: ConfluentConsumerOptions): ParallelConsumer<ConfluentMessage> {
  checkConsumerOptions(options, CONFLUENT_OPTION_NAMES);
  const { kafka, config, topics, fromBeginning, deadLetter, commitOutcomeTimeoutMs, revokeTimeoutMs, tracing, ...others } = options;
  const group = (): string | undefined => (config as { "group.id"?: string; kafkaJS?: { groupId?: string } })?.["group.id"] ?? (config as { kafkaJS?: { groupId?: string } })?.kafkaJS?.groupId;
  const rest = { ...others, ...defined({ tracing: openTelemetryTracing<ConfluentMessage>(tracing, group) }) };
  const client = new ConfluentClient(kafka, config, topics, {
    revokeTimeoutMs: revokeTimeoutMs ?? (typeof rest.drainTimeoutMs === "number" ? rest.drainTimeoutMs : 5_000) + 5_000,
    ...defined({ fromBeginning, deadLetter, commitOutcomeTimeoutMs }),
  });
  return new ParallelConsumer<ConfluentMessage>(client, rest);
}

/** Options of {@link consumeConfluent}: the consumer options plus the signals that shut it down. */
export interface ConsumeConfluentOptions extends ConfluentConsumerOptions {
  /** Default `["SIGINT", "SIGTERM"]`; `[]` installs no handler. */
  signals?: readonly ShutdownSignal[];
}

/**
 * Starts a Confluent parallel consumer that shuts down gracefully on SIGINT/SIGTERM (a
 * second signal gets Node's default: exit at once) or when `signal` aborts. Resolves once
 * consuming has begun.
 */
export async function consumeConfluent(options: ConsumeConfluentOptions): Promise<ParallelConsumer<ConfluentMessage>> {
  const { signals = ["SIGINT", "SIGTERM"], ...rest } = options;
  return await startWithSignals(createConfluentConsumer(rest), signals);
}

export { ConfluentClient } from "./client.ts";
export { CommitRefusedError } from "./commits.ts";
export type { ConfluentDeadLetterOptions } from "./dead_letter.ts";
export type * from "./types.ts";
export * from "../shared/consumer_api.ts";
export type { ShutdownSignal } from "../shared/shutdown_signal.ts";
export type { OpenTelemetryTracer, TracingOption, TracingOptions } from "../shared/tracing.ts";
