/**
 * Retry when the handler says: a failed attempt may name when the record's next attempt
 * should run (a delay, or a date, e.g. from an HTTP 429's `Retry-After`), instead of the
 * retry policy's backoff. The handler throws an error that carries `retryAfterMs` (a
 * delay in ms) or `retryAt` (a `Date` or epoch ms) — a {@link RetryAfterError}, or any
 * error of its own with one of those fields. The wait is capped by the policy's
 * `maxDelayMs`, counts as a retry like any other failed attempt (so `retries` still
 * bounds it, then dead letter or stop), and holds only that record (and, under `key`
 * ordering, its key): the partition's other keys go on.
 *
 * @module
 */
import { describe, InvalidArgumentError, OffsetFrontierError } from "../../errors.ts";
import { backoffDelay, type ResolvedRetryPolicy } from "./retry.ts";

/**
 * A failed attempt that asks for the next one at a time of its choosing.
 *
 * @example
 * ```ts
 * import { parseRetryAfter, RetryAfterError } from "offset-frontier";
 * const handler = async (message: { value: string }) => {
 *   const res = await fetch("https://api.example/orders", { method: "POST", body: message.value });
 *   if (res.status === 429) throw new RetryAfterError(parseRetryAfter(res.headers.get("retry-after")) ?? 1_000);
 *   if (!res.ok) throw new Error(`HTTP ${res.status}`);
 * };
 * ```
 */
export class RetryAfterError extends OffsetFrontierError {
  /** The delay asked for (set when constructed with a number). */
  readonly retryAfterMs?: number;
  /** The time asked for (set when constructed with a `Date`). */
  readonly retryAt?: Date;
  /** What made the attempt fail, if given. */
  override readonly cause: unknown;

  /**
   * A failed attempt whose record runs again after `when` (a delay or a date).
   * @param when a delay in ms (finite, ≥ 0) or the date of the next attempt
   * @param options `cause`: the underlying failure; `message`: replaces the default message
   * @throws {InvalidArgumentError} for a delay that is not a finite number ≥ 0, or an invalid date
   */
  constructor(when: number | Date, options: { cause?: unknown; message?: string } = {}) {
    if (when instanceof Date) {
      if (Number.isNaN(when.getTime())) throw new InvalidArgumentError(`RetryAfterError: the date is invalid; got ${describe(when)}`);
    } else if (typeof when !== "number" || !Number.isFinite(when) || when < 0) {
      throw new InvalidArgumentError(`RetryAfterError: the delay must be a finite number of ms ≥ 0 or a Date; got ${describe(when)}`);
    }
    super(options.message ?? (when instanceof Date ? `retry at ${when.toISOString()}` : `retry in ${when} ms`));
    if (when instanceof Date) this.retryAt = when;
    else this.retryAfterMs = when;
    this.cause = options.cause;
  }
}

/**
 * The delay a thrown value asks for (ms from `now`, ≥ 0), or `undefined` when it asks for
 * none: an object with a finite numeric `retryAfterMs`, or a `retryAt` that is a valid
 * `Date` or finite epoch ms (a past time asks for 0). Anything else (no such field, NaN, a
 * string) asks for nothing, and the policy's backoff applies.
 */
export function requestedDelay(error: unknown, now: number = Date.now()): number | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { retryAfterMs, retryAt } = error as { retryAfterMs?: unknown; retryAt?: unknown };
  if (typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs)) return Math.max(0, retryAfterMs);
  const at = retryAt instanceof Date ? retryAt.getTime() : retryAt;
  if (typeof at === "number" && Number.isFinite(at)) return Math.max(0, at - now);
  return undefined;
}

/**
 * The wait before the next attempt after `attempt` failed with `error`: what the error
 * asks for ({@link requestedDelay}) capped by `maxDelayMs`, else the policy's backoff.
 * `requested` says which.
 */
export function retryDelay(
  policy: ResolvedRetryPolicy,
  attempt: number,
  error: unknown,
  now: number = Date.now(),
): { delayMs: number; requested: boolean } {
  const asked = requestedDelay(error, now);
  if (asked === undefined) return { delayMs: backoffDelay(policy, attempt), requested: false };
  return { delayMs: Math.min(policy.maxDelayMs, Math.round(asked)), requested: true };
}

/**
 * Milliseconds an HTTP `Retry-After` header value asks to wait: delta-seconds (`"120"`) or
 * an HTTP-date (`"Wed, 21 Oct 2026 07:28:00 GMT"`, a past one gives 0). `undefined` for an
 * absent or unreadable value.
 * @example
 * ```ts
 * import { parseRetryAfter } from "offset-frontier";
 * parseRetryAfter("2"); // 2000
 * parseRetryAfter(null); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (typeof value !== "string") return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1_000;
  const at = Date.parse(v);
  return Number.isNaN(at) || !/[a-z]/i.test(v) ? undefined : Math.max(0, at - now);
}
