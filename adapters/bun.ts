/**
 * The KafkaJS binding under its first name for Bun: `offset-frontier/bun` is
 * `offset-frontier/kafkajs`, kept for code written against it. New code:
 * `offset-frontier/platformatic` (Bun runs `@platformatic/kafka`).
 *
 * Given only its KafkaJS consumer (as below), each new assignment reads the committed offsets
 * and completed sets back through that consumer's own connection; `kafka` (the KafkaJS
 * client) is needed only for `transactional`, and names the seed brokers tried when the
 * consumer gives up waiting for the cluster.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { consume } from "offset-frontier/bun";
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
// Bun implements Node's process signals as Node does: the Node adapter serves unchanged.
export * from "./node.ts";
