/**
 * offset-frontier for Node: the KafkaJS parallel consumer, shut down gracefully on
 * SIGINT/SIGTERM (a second signal gets the default behaviour: exit at once).
 *
 * Given only its KafkaJS consumer (as below), each new assignment reads the committed offsets
 * and completed sets back through that consumer's own connection; `kafka` (the KafkaJS
 * client) is needed only for `transactional`, and names the seed brokers tried when the
 * consumer gives up waiting for the cluster.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { consume } from "offset-frontier/node";
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
import process from "node:process";
import { consumeUntil, type KafkaJSConsumerOptions, type KafkaMessage, type ParallelConsumer } from "./kafkajs/mod.ts";

export * from "./kafkajs/mod.ts";

/** Options of {@link consume}: the KafkaJS consumer options plus the signals that shut it down. */
export interface ConsumeOptions extends KafkaJSConsumerOptions {
  /** Default `["SIGINT", "SIGTERM"]`; `[]` installs no handler. */
  signals?: readonly NodeJS.Signals[];
}

/** Starts a KafkaJS parallel consumer that shuts down gracefully on SIGINT/SIGTERM (or `signal`). */
export function consume(options: ConsumeOptions): Promise<ParallelConsumer<KafkaMessage>> {
  const { signals = ["SIGINT", "SIGTERM"], ...rest } = options;
  return consumeUntil(rest, (shutdown) => {
    for (const s of signals) process.once(s, shutdown);
    return () => {
      for (const s of signals) process.off(s, shutdown);
    };
  });
}
