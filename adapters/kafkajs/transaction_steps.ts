/**
 * The steps of one KafkaJS transaction that need no producer state: output records as
 * KafkaJS messages and the fencing test on KafkaJS's errors; the sizes and the bounded wait
 * (with the grace for the broker's own verdict) are shared with the other bindings
 * (adapters/shared/transaction_bounds.ts) and re-exported here.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { IHeaders, Message } from "kafkajs";
import type { OutputRecord } from "../../core/consumer/port/mod.ts";

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

export { REQUEST_BYTES, sizeOf, timeout, TransactionTimeoutError, VERDICT_GRACE_MS } from "../shared/transaction_bounds.ts";
