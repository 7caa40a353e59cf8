/**
 * The KafkaJS types that appear in this package's public API, under documented names
 * (they are KafkaJS's own types, unchanged).
 *
 * @module
 */
import type * as kafkajs from "kafkajs";

/** A KafkaJS consumer, from `kafka.consumer({ groupId, … })`. */
export type Consumer = kafkajs.Consumer;
/** A KafkaJS producer, from `kafka.producer()`. */
export type Producer = kafkajs.Producer;
/** The KafkaJS client, `new Kafka({ brokers })`. */
export type Kafka = kafkajs.Kafka;
/** A record as KafkaJS delivers it: `key` and `value` (Buffers or `null`), `headers`, `offset`, `timestamp`. */
export type KafkaMessage = kafkajs.KafkaMessage;
