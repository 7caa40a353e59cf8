/**
 * The KafkaJS binding under its first name: `offset-frontier/node` is
 * `offset-frontier/kafkajs` (same exports, same `consume()`), kept for code written against
 * it. New code: `offset-frontier/platformatic` where `@platformatic/kafka` runs (Node ≥ 22.22
 * or ≥ 24.6, Bun, Deno), `offset-frontier/kafkajs` on Node 20.
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
import type { ConsumeKafkaJSOptions } from "./kafkajs/mod.ts";

export * from "./kafkajs/mod.ts";

/** Options of `consume`: the KafkaJS consumer options plus the signals that shut it down. */
export type ConsumeOptions = ConsumeKafkaJSOptions;
