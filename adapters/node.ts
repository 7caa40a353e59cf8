/**
 * The KafkaJS binding under its first name: `offset-frontier/node` is
 * `offset-frontier/kafkajs` (same exports, same `consume()`), kept for code written against
 * it. New code: `offset-frontier/platformatic` where `@platformatic/kafka` runs (Node ≥ 22.22
 * or ≥ 24.6, Bun, Deno), `offset-frontier/kafkajs` on Node 20.
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
