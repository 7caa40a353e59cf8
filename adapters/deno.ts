/**
 * The KafkaJS binding under its first name for Deno: `offset-frontier/deno` is
 * `offset-frontier/kafkajs` with its signals through `Deno.addSignalListener`, kept for code
 * written against it. New code: `offset-frontier/platformatic` (Deno runs
 * `@platformatic/kafka`: `--allow-net --allow-env --allow-read`). KafkaJS needs
 * `--allow-net --allow-env` (and `--allow-sys` on some systems).
 *
 * Given only its KafkaJS consumer (as below), each new assignment reads the committed offsets
 * and completed sets back through that consumer's own connection; `kafka` (the KafkaJS
 * client) is needed only for `transactional`, and names the seed brokers tried when the
 * consumer gives up waiting for the cluster.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { consume } from "offset-frontier/deno";
 * const kafka = new Kafka({ brokers: ["127.0.0.1:9092"] });
 * const consumer = await consume({
 *   consumer: kafka.consumer({ groupId: "orders", maxWaitTimeInMs: 500 }),
 *   topics: ["orders"],
 *   handler: async (message) => { console.log(message.value?.toString()); },
 * });
 * await consumer.done; // after Ctrl-C: in-flight records finished, safe offsets committed
 * ```
 *
 * @module
 */
import { consumeUntil, type KafkaJSConsumerOptions, type KafkaMessage, type ParallelConsumer } from "./kafkajs/mod.ts";

export * from "./kafkajs/mod.ts";
// this entry's own consume() (Deno's signal listeners) and ShutdownSignal replace the binding's

/** A signal name Deno can listen to. */
export type ShutdownSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT";

interface DenoSignals {
  addSignalListener(signal: ShutdownSignal, handler: () => void): void;
  removeSignalListener(signal: ShutdownSignal, handler: () => void): void;
}

/** Options of {@link consume}: the KafkaJS consumer options plus the signals that shut it down. */
export interface ConsumeOptions extends KafkaJSConsumerOptions {
  /** Default `["SIGINT", "SIGTERM"]`; `[]` installs no listener. */
  signals?: readonly ShutdownSignal[];
}

/** Starts a KafkaJS parallel consumer that shuts down gracefully on SIGINT/SIGTERM (or `signal`). */
export function consume(options: ConsumeOptions): Promise<ParallelConsumer<KafkaMessage>> {
  const { signals = ["SIGINT", "SIGTERM"], ...rest } = options;
  const deno = (globalThis as unknown as { Deno: DenoSignals }).Deno;
  return consumeUntil(rest, (shutdown) => {
    for (const s of signals) deno.addSignalListener(s, shutdown);
    return () => {
      for (const s of signals) deno.removeSignalListener(s, shutdown);
    };
  });
}
