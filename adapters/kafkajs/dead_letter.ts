/**
 * Dead letters for the KafkaJS binding: the failed record, its headers plus the
 * `x-offset-frontier-*` headers, produced with `acks: -1` through a KafkaJS producer (or,
 * in exactly-once mode, staged as the record's output in its transaction). While the
 * cluster does not answer, a dead letter waits for it as the consumer does.
 *
 * @module
 */
import type { Admin, IHeaders } from "kafkajs";
import { ClusterRefusedError } from "../../core/errors.ts";
import type { ClientSink, DeadLetterInfo } from "../../core/consumer/port/mod.ts";
import type { OutputRecord } from "../../core/consumer/port/mod.ts";
import { deadLetterHeaders } from "../shared/dead_letter_headers.ts";
import { isUnreachable } from "./errors.ts";
import type { KafkaMessage, Producer } from "./types.ts";
import { sleepUnlessAborted } from "./waits.ts";

/** Where dead letters go. */
export interface DeadLetterOptions {
  /** A KafkaJS producer (not connected: the consumer connects and disconnects it). Sent with `acks: -1`. */
  producer: Producer;
  /** The dead-letter topic, or a function of the record's topic. Default `` `${topic}.DLT` ``. */
  topic?: string | ((topic: string) => string);
}

function deadLetterHeadersOf(message: KafkaMessage, info: DeadLetterInfo): IHeaders {
  return deadLetterHeaders(message.headers, info) as IHeaders;
}

/** The dead-letter topic of a record's topic under `topic` (a name, a function, or `` `${topic}.DLT` ``). */
export function topicOf(topic: DeadLetterOptions["topic"]): (topic: string) => string {
  return typeof topic === "function" ? topic : typeof topic === "string" ? () => topic : (t) => `${t}.DLT`;
}

/** What a {@link KafkaJSDeadLetters} waits on while the cluster does not answer. */
export interface DeadLetterWaits {
  /** The runner's sink (its signal ends every wait), once started. */
  readonly sink: () => ClientSink<KafkaMessage> | undefined;
  /** Whether the binding closed: nothing waits any more. */
  readonly closed: () => boolean;
  /** The cluster answered. */
  readonly available: () => void;
  /** A failed attempt to reach the cluster; returns the backoff before the next one. */
  readonly unavailable: (error: unknown) => number;
}

/** Produces dead letters through one KafkaJS producer. */
export class KafkaJSDeadLetters {
  /** The producer (the binding connects and disconnects it). */
  readonly producer: Producer;
  readonly #topic: (topic: string) => string;
  readonly #waits: DeadLetterWaits;

  /**
   * Dead letters through `options.producer` (validated by the caller).
   * @param options the producer and the dead-letter topic
   * @param waits what a dead letter waits on during an outage
   */
  constructor(options: DeadLetterOptions, waits: DeadLetterWaits) {
    this.producer = options.producer;
    this.#topic = topicOf(options.topic);
    this.#waits = waits;
  }

  /** Produces the dead letter of `message`; resolves once acknowledged by all in-sync replicas. */
  async produce(message: KafkaMessage, info: DeadLetterInfo): Promise<void> {
    const headers = deadLetterHeadersOf(message, info);
    const record = {
      topic: this.#topic(info.topic),
      acks: -1,
      messages: [{ key: message.key, value: message.value, headers, timestamp: message.timestamp }],
    };
    const waits = this.#waits;
    // While the cluster does not answer, the dead letter waits for it like the consumer does
    // (the runner's backoff; its give-up bound); any other failure goes to the retry policy.
    for (;;) {
      try {
        await this.producer.send(record);
        waits.available();
        return;
      } catch (error) {
        const sink = waits.sink();
        if (!isUnreachable(error) || waits.closed() || !sink || sink.signal.aborted || info.signal?.aborted) throw error;
        if (!(await sleepUnlessAborted(waits.unavailable(error), sink.signal, info.signal))) throw error;
      }
    }
  }
}

/** The dead letter of a record as an output of its transaction (exactly-once mode). */
export function transactionalDeadLetter(o: DeadLetterOptions): (message: unknown, info: DeadLetterInfo) => OutputRecord {
  const dlqTopic = topicOf(o.topic);
  return (message, info) => {
    const m = message as KafkaMessage;
    const headers: Record<string, string | Uint8Array> = {};
    for (const [k, v] of Object.entries(deadLetterHeadersOf(m, info))) {
      if (typeof v === "string" || v instanceof Uint8Array) headers[k] = v;
      else if (Array.isArray(v) && v.length > 0) headers[k] = v[0] as string | Uint8Array;
    }
    return { topic: dlqTopic(info.topic), key: m.key, value: m.value, headers, timestamp: m.timestamp };
  };
}

/** Whether a KafkaJS error (or a cause) is the protocol error UNKNOWN_TOPIC_OR_PARTITION. */
function isUnknownTopic(error: unknown): boolean {
  for (let e = error as { type?: unknown; cause?: unknown } | undefined, i = 0; e && i < 20; e = e.cause as typeof e, i++) {
    if (e.type === "UNKNOWN_TOPIC_OR_PARTITION") return true;
  }
  return false;
}

/**
 * Resolves once every dead-letter topic exists (one metadata request each, through the admin
 * client); a missing one would show only as failed dead letters, record after record, until
 * the partition stopped.
 * @param admin the binding's connected admin client
 * @param topics the dead-letter topics of the subscribed topic names
 * @throws {ClusterRefusedError} of kind `unknown-topic` naming the missing ones; any other failure as KafkaJS threw it
 */
export async function deadLetterTopicsExist(admin: Pick<Admin, "fetchTopicMetadata">, topics: readonly string[]): Promise<void> {
  const wanted = [...new Set(topics)];
  const answers = await Promise.allSettled(wanted.map((topic) => admin.fetchTopicMetadata({ topics: [topic] })));
  const missing = wanted.filter((_, i) => answers[i].status === "rejected" && isUnknownTopic((answers[i] as PromiseRejectedResult).reason));
  const other = answers.find((a, i): a is PromiseRejectedResult => a.status === "rejected" && !missing.includes(wanted[i]));
  if (missing.length > 0) {
    const first = answers[wanted.indexOf(missing[0])] as PromiseRejectedResult;
    throw new ClusterRefusedError("unknown-topic", undefined, missing, first.reason, "dead-letter topic");
  }
  if (other) throw other.reason;
}
