/**
 * What the KafkaJS binding accepts as its consumer, topics and KafkaJS client, checked
 * before anything is taken: a KafkaJS consumer (not the KafkaJS-style consumer of
 * `@confluentinc/kafka-javascript`, which has no instrumentation events), a non-empty list
 * of topic names or RegExps, and `new Kafka(…)`.
 *
 * @module
 */
import type { Consumer, Kafka } from "./types.ts";
import { describe, InvalidArgumentError } from "../../core/errors.ts";

/** KafkaJS's consumers have `events` (GROUP_JOIN, …); Confluent's KafkaJS-style consumer throws "not implemented" there. */
function hasKafkaJSEvents(consumer: Consumer): boolean {
  try {
    return typeof consumer.events?.GROUP_JOIN === "string";
  } catch {
    return false;
  }
}

/**
 * Checks the binding's consumer, topics and KafkaJS client.
 * @param consumer what was given as the KafkaJS consumer
 * @param topics what was given as the topics
 * @param kafka what was given as the KafkaJS client, if anything
 * @throws {InvalidArgumentError} naming the first value that is not what the binding takes
 */
export function checkArguments(consumer: Consumer, topics: ReadonlyArray<string | RegExp>, kafka: Kafka | undefined): void {
  if (!consumer || typeof consumer.run !== "function" || typeof consumer.commitOffsets !== "function") {
    throw new InvalidArgumentError(`consumer must be a KafkaJS consumer; got ${describe(consumer)}`);
  }
  if (!hasKafkaJSEvents(consumer)) {
    throw new InvalidArgumentError(
      "consumer is not a KafkaJS consumer: it has no instrumentation events (a @confluentinc/kafka-javascript consumer? use offset-frontier/confluent for it)",
    );
  }
  if (!Array.isArray(topics) || topics.length === 0) {
    throw new InvalidArgumentError(`topics must be a non-empty array of names or RegExps; got ${describe(topics)}`);
  }
  for (const t of topics) {
    if (typeof t !== "string" && !(t instanceof RegExp)) {
      throw new InvalidArgumentError(`topics must hold topic names (strings) or RegExps; got ${describe(t)}`);
    }
    if (t === "") throw new InvalidArgumentError(`topics must not hold an empty name`);
  }
  if (kafka !== undefined && typeof (kafka as { admin?: unknown }).admin !== "function") {
    throw new InvalidArgumentError(`kafka must be the KafkaJS client (new Kafka(…)); got ${describe(kafka)}`);
  }
}
