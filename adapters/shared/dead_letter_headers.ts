/**
 * The headers a dead letter carries, shared by every binding: the record's own headers
 * plus where it came from and why it failed.
 *
 * @module
 */
import type { DeadLetterInfo } from "../../core/consumer/port/mod.ts";

/** Header names carried by a dead letter (besides the record's own headers). */
export const DEAD_LETTER_HEADERS = {
  error: "x-offset-frontier-error",
  errorName: "x-offset-frontier-error-name",
  topic: "x-offset-frontier-topic",
  partition: "x-offset-frontier-partition",
  offset: "x-offset-frontier-offset",
  attempts: "x-offset-frontier-attempts",
} as const;

/** The error's stack (or `Name: message`), for the error header; at most 4,096 characters. */
function errorText(error: unknown): string {
  const text = error instanceof Error ? error.stack ?? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 4096);
}

/**
 * A dead letter's headers: a copy of `own` (the record's headers, left unchanged) with
 * `info.headers` (with tracing: the context of the attempt that gave up) and the
 * {@link DEAD_LETTER_HEADERS} set from `info`.
 * @param own the record's headers, if any
 * @param info the failed record's source and last error
 */
export function deadLetterHeaders<V>(own: Readonly<Record<string, V>> | undefined, info: DeadLetterInfo): Record<string, V | string> {
  const headers: Record<string, V | string> = { ...(own ?? {}), ...info.headers }; // the trace context replaces the record's
  const err = info.error;
  headers[DEAD_LETTER_HEADERS.error] = errorText(err);
  headers[DEAD_LETTER_HEADERS.errorName] = err instanceof Error ? err.name : typeof err;
  headers[DEAD_LETTER_HEADERS.topic] = info.topic;
  headers[DEAD_LETTER_HEADERS.partition] = String(info.partition);
  headers[DEAD_LETTER_HEADERS.offset] = String(info.offset);
  headers[DEAD_LETTER_HEADERS.attempts] = String(info.attempts);
  return headers;
}
