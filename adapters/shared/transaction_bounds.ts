/**
 * What every binding's exactly-once plumbing bounds a transaction with: the output bytes
 * per produce request and an output record's size, the bounded wait of a step and the
 * grace for the broker's own verdict after it.
 *
 * @module
 */
import { OffsetFrontierError } from "../../core/errors.ts";
import type { OutputRecord } from "../../core/consumer/port/mod.ts";

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
 * saying "fenced" must name the outcome (capped by the transaction's own timeout). 3 s: a
 * woken @platformatic/kafka zombie under a loaded clean-clone run got its fencing answer
 * later than the 1 s this was, and reported its transactions aborted instead of fenced.
 */
export const VERDICT_GRACE_MS = 3_000;

/** `p`, or a {@link TransactionTimeoutError} naming `what` once `ms` passed first. */
export function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransactionTimeoutError(what, ms)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
