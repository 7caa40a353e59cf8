/**
 * Dead letters for the `@platformatic/kafka` binding: the failed record with its headers
 * plus the `x-offset-frontier-*` headers, produced with `acks: -1` through a
 * `@platformatic/kafka` producer (or, in exactly-once mode, staged as the record's output in
 * its transaction). While the cluster does not answer, a dead letter waits for it as the
 * consumer does.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { ClientSink, DeadLetterInfo } from "../../core/consumer/port/mod.ts";
import type { OutputRecord } from "../../core/consumer/port/mod.ts";
import { deadLetterHeaders } from "../shared/dead_letter_headers.ts";
import { sleepUnlessAborted } from "../kafkajs/waits.ts";
import { isUnreachable } from "./errors.ts";
import type { ClientProducer, PlatformaticMessage, PlatformaticProducer } from "./types.ts";

/** Where dead letters go. */
export interface PlatformaticDeadLetterOptions {
  /** A `@platformatic/kafka` producer (the consumer closes it when it closes). Sent with `acks: -1`. */
  producer: PlatformaticProducer;
  /** The dead-letter topic, or a function of the record's topic. Default `` `${topic}.DLT` ``. */
  topic?: string | ((topic: string) => string);
}

/** The dead-letter topic of a record's topic under `topic` (a name, a function, or `` `${topic}.DLT` ``). */
export function topicOf(topic: PlatformaticDeadLetterOptions["topic"]): (topic: string) => string {
  return typeof topic === "function" ? topic : typeof topic === "string" ? () => topic : (t) => `${t}.DLT`;
}

/** The dead letter of a record as an output of its transaction (exactly-once mode). */
export function transactionalDeadLetter(o: PlatformaticDeadLetterOptions): (message: unknown, info: DeadLetterInfo) => OutputRecord {
  const dlqTopic = topicOf(o.topic);
  return (message, info) => {
    const m = message as PlatformaticMessage;
    const headers: Record<string, string | Uint8Array> = {};
    for (const [k, v] of Object.entries(deadLetterHeaders(m.headers, info))) if (v !== null) headers[k] = v;
    return { topic: dlqTopic(info.topic), key: m.key, value: m.value, headers, timestamp: m.timestamp };
  };
}

/** What a dead letter waits on while the cluster does not answer. */
export interface PlatformaticDeadLetterWaits {
  /** The runner's sink (its signal ends every wait), once started. */
  readonly sink: () => ClientSink<PlatformaticMessage> | undefined;
  /** Whether the binding closed. */
  readonly closed: () => boolean;
}

/** Produces dead letters through one `@platformatic/kafka` producer. */
export class PlatformaticDeadLetters {
  /** The producer (closed by the binding). */
  readonly producer: ClientProducer;
  readonly #topic: (topic: string) => string;
  readonly #waits: PlatformaticDeadLetterWaits;

  /**
   * Dead letters through `options.producer`.
   * @param options the producer and the dead-letter topic
   * @param waits what a dead letter waits on during an outage
   */
  constructor(options: PlatformaticDeadLetterOptions, waits: PlatformaticDeadLetterWaits) {
    this.producer = options.producer as unknown as ClientProducer;
    this.#topic = topicOf(options.topic);
    this.#waits = waits;
  }

  /** Produces the dead letter of `message`; resolves once acknowledged by all in-sync replicas. */
  async produce(message: PlatformaticMessage, info: DeadLetterInfo): Promise<void> {
    // Header names are Buffers too (the producer's default serializers pass bytes through).
    const headers = new Map<Buffer, Buffer>();
    for (const [k, v] of Object.entries(deadLetterHeaders(message.headers, info))) {
      if (v !== null) headers.set(Buffer.from(k), typeof v === "string" ? Buffer.from(v) : v);
    }
    const record = {
      topic: this.#topic(info.topic),
      ...(message.key !== null ? { key: message.key } : {}),
      ...(message.value !== null ? { value: message.value } : {}),
      headers,
    };
    for (;;) {
      try {
        await this.producer.send({ messages: [record], acks: -1 });
        this.#waits.sink()?.available();
        return;
      } catch (error) {
        const sink = this.#waits.sink();
        if (!isUnreachable(error) || this.#waits.closed() || !sink || sink.signal.aborted || info.signal?.aborted) throw error;
        if (!(await sleepUnlessAborted(sink.unavailable(error), sink.signal, info.signal))) throw error;
      }
    }
  }
}
