/**
 * Dead letters of the KafkaJS binding: where they go and what they carry. A dead letter is
 * the failed record itself (key, value, headers, timestamp) plus headers naming the error,
 * its source and the attempts, produced with `acks: -1`.
 *
 * @module
 */
import type { IHeaders, KafkaMessage, Producer } from "kafkajs";
import type { DeadLetterInfo } from "../core/consumer/client.ts";

/** Where dead letters go. */
export interface DeadLetterOptions {
  /** A KafkaJS producer (not connected: the consumer connects and disconnects it). Sent with `acks: -1`. */
  producer: Producer;
  /** The dead-letter topic, or a function of the record's topic. Default `` `${topic}.DLT` ``. */
  topic?: string | ((topic: string) => string);
}

/** Header names carried by a dead letter (besides the record's own headers). */
export const DEAD_LETTER_HEADERS = {
  error: "x-offset-frontier-error",
  errorName: "x-offset-frontier-error-name",
  topic: "x-offset-frontier-topic",
  partition: "x-offset-frontier-partition",
  offset: "x-offset-frontier-offset",
  attempts: "x-offset-frontier-attempts",
} as const;

function errorText(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/** Produces `message` to `topic` as the dead letter of `info`; resolves once the broker acknowledged it. */
export async function produceDeadLetter(
  producer: Producer,
  topic: string,
  message: KafkaMessage,
  info: DeadLetterInfo,
): Promise<void> {
  const headers: IHeaders = { ...(message.headers ?? {}) };
  const err = info.error;
  headers[DEAD_LETTER_HEADERS.error] = errorText(err).slice(0, 4096);
  headers[DEAD_LETTER_HEADERS.errorName] = err instanceof Error ? err.name : typeof err;
  headers[DEAD_LETTER_HEADERS.topic] = info.topic;
  headers[DEAD_LETTER_HEADERS.partition] = String(info.partition);
  headers[DEAD_LETTER_HEADERS.offset] = String(info.offset);
  headers[DEAD_LETTER_HEADERS.attempts] = String(info.attempts);
  await producer.send({
    topic,
    acks: -1,
    messages: [{ key: message.key, value: message.value, headers, timestamp: message.timestamp }],
  });
}
