/**
 * Dead letters for the Confluent binding: the failed record, its headers plus the
 * `x-offset-frontier-*` headers (the same as the KafkaJS binding's), produced through a
 * producer of the Confluent client. The produce counts only once the client reported the
 * record delivered without error (with the producer's `acks`, by default all replicas).
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../core/errors.ts";
import type { DeadLetterInfo } from "../../core/consumer/port/mod.ts";
import { deadLetterHeaders } from "../shared/dead_letter_headers.ts";
import type { ConfluentHeaders, ConfluentMessage, ConfluentProducer } from "./types.ts";

/** Where dead letters go. */
export interface ConfluentDeadLetterOptions {
  /** A producer from the Confluent client (`kafka.producer()`), not connected: the consumer connects and disconnects it. */
  producer: ConfluentProducer;
  /** The dead-letter topic, or a function of the record's topic. Default `` `${topic}.DLT` ``. */
  topic?: string | ((topic: string) => string);
}

/** Produces dead letters through one Confluent producer. */
export class DeadLetterProducer {
  readonly #producer: ConfluentProducer;
  readonly #topic: (topic: string) => string;

  /**
   * A dead-letter producer (not connected yet).
   * @param options the producer and the dead-letter topic
   * @throws {InvalidArgumentError} when `producer` is not a producer
   */
  constructor(options: ConfluentDeadLetterOptions) {
    if (!options?.producer || typeof options.producer.send !== "function") {
      throw new InvalidArgumentError(`deadLetter.producer must be a Confluent producer; got ${describe(options?.producer)}`);
    }
    this.#producer = options.producer;
    const t = options.topic;
    this.#topic = typeof t === "function" ? t : typeof t === "string" ? () => t : (topic) => `${topic}.DLT`;
  }

  /** Connects the producer. */
  connect(): Promise<void> {
    return this.#producer.connect();
  }

  /** Flushes and disconnects the producer. */
  disconnect(): Promise<void> {
    return this.#producer.disconnect();
  }

  /** Produces `message` to its dead-letter topic; resolves once delivered, rejects otherwise. */
  async produce(message: ConfluentMessage, info: DeadLetterInfo): Promise<void> {
    const headers = deadLetterHeaders(message.headers, info) as ConfluentHeaders;
    const topic = this.#topic(info.topic);
    const reports = await this.#producer.send({
      topic,
      messages: [{ key: message.key, value: message.value, headers, ...(message.timestamp ? { timestamp: message.timestamp } : {}) }],
    });
    const failed = reports.find((r) => r.errorCode !== 0 && r.errorCode !== undefined);
    if (failed) throw new Error(`the dead letter of ${info.topic}/${info.partition}@${info.offset} to ${topic} failed (error code ${failed.errorCode})`);
  }
}
