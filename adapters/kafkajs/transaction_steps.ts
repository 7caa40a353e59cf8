/**
 * The steps of one KafkaJS transaction that need no producer state: output records as
 * KafkaJS messages and their sizes, the fencing test on KafkaJS's errors, and the bounded
 * wait (with the grace for the broker's own verdict).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { IHeaders, Message } from "kafkajs";
import type { OutputRecord } from "../../core/consumer/transactions.ts";
import { OffsetFrontierError } from "../../core/errors.ts";

/** Kafka error codes that mean another producer with the same transactional id took over. */
const FENCED_CODES = new Set([47 /* INVALID_PRODUCER_EPOCH */, 90 /* PRODUCER_FENCED */]);
const FENCED_TYPES = new Set(["INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED"]);

/** Whether a KafkaJS error (or its cause, after retries) says this producer was fenced. */
export function isFenced(error: unknown): boolean {
  for (let e = error as { type?: unknown; code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.type === "string" && FENCED_TYPES.has(e.type)) return true;
    if (typeof e.code === "number" && FENCED_CODES.has(e.code)) return true;
  }
  return false;
}

function bytes(v: string | Uint8Array): string | Buffer {
  return typeof v === "string" ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** An {@link OutputRecord} as a KafkaJS message. */
export function toKafkaJSMessage(r: OutputRecord): Message {
  let headers: IHeaders | undefined;
  if (r.headers) {
    headers = {};
    for (const [k, v] of Object.entries(r.headers)) headers[k] = bytes(v);
  }
  return {
    value: r.value === null ? null : bytes(r.value),
    ...(r.key !== undefined ? { key: r.key === null ? null : bytes(r.key) } : {}),
    ...(r.partition !== undefined ? { partition: r.partition } : {}),
    ...(headers ? { headers } : {}),
    ...(r.timestamp !== undefined ? { timestamp: r.timestamp } : {}),
  };
}

/** Output bytes per produce request of a transaction. */
export const REQUEST_BYTES = 256 * 1024;

/** An output record's size as sent, roughly (key, value, headers, per-record overhead). */
export function sizeOf(r: OutputRecord): number {
  const len = (v: string | Uint8Array | null | undefined): number => v == null ? 0 : typeof v === "string" ? v.length * 3 : v.byteLength;
  let n = 24 + len(r.key) + len(r.value);
  if (r.headers) for (const [k, v] of Object.entries(r.headers)) n += k.length * 3 + len(v) + 4;
  return n;
}

/** A step of a transaction did not end within its bound (the broker has not answered, or the process was stopped past it). */
export class TransactionTimeoutError extends OffsetFrontierError {
  /**
   * The step `what` did not end within `ms`.
   * @param what the step, e.g. "the transaction of t/0"
   * @param ms its bound
   */
  constructor(what: string, ms: number) {
    super(`${what} did not end within ${ms} ms`);
  }
}

/**
 * After a transaction's timeout, how long to wait for the broker's own answer before
 * reporting the outcome: a process stopped past its timeout (SIGSTOP, a long pause) sees
 * the timer fire at wake-up, just before the answers that arrived meanwhile are read; one
 * saying "fenced" must name the outcome (capped by the transaction's own timeout).
 */
export const VERDICT_GRACE_MS = 1_000;

export function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransactionTimeoutError(what, ms)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
