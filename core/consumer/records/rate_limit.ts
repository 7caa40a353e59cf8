/**
 * The rate limit of handler starts (`rateLimit: { perSecond, burst }`): a token bucket
 * over the whole consumer. Every handler attempt (first calls and retries) takes a token;
 * the bucket holds at most `burst` and refills at `perSecond`, so over any span of `t`
 * seconds at most `burst + perSecond × t` attempts start. A record without a token stays
 * queued; queued records are registered records, so they count against the
 * partition's high mark and `maxBuffered`, which pause fetching: the limit backs up into
 * the client instead of buffering without bound.
 *
 * @module
 */
import { describe, InvalidArgumentError } from "../../errors.ts";

/** `rateLimit`: handler starts per second across the consumer. */
export interface RateLimitOptions {
  /** Handler starts (attempts) per second, over all partitions: a finite number > 0. */
  perSecond: number;
  /** Starts allowed at once after a quiet spell: an integer ≥ 1. Default `perSecond` rounded up (one second's worth). */
  burst?: number;
}

/** Validated {@link RateLimitOptions}. */
export type ResolvedRateLimit = Required<RateLimitOptions>;

/**
 * Validates a rate limit and fills in `burst`.
 * @throws {InvalidArgumentError} for a `perSecond` that is not a finite number > 0, or a `burst` that is not an integer ≥ 1
 */
export function resolveRateLimit(o: RateLimitOptions): ResolvedRateLimit {
  if (o === null || typeof o !== "object") {
    throw new InvalidArgumentError(`rateLimit must be { perSecond, burst? }; got ${describe(o)}`);
  }
  const { perSecond } = o;
  if (typeof perSecond !== "number" || !Number.isFinite(perSecond) || perSecond <= 0) {
    throw new InvalidArgumentError(`rateLimit.perSecond must be a finite number > 0; got ${describe(perSecond)}`);
  }
  const burst = o.burst ?? Math.max(1, Math.ceil(perSecond));
  if (typeof burst !== "number" || !Number.isSafeInteger(burst) || burst < 1) {
    throw new InvalidArgumentError(`rateLimit.burst must be an integer ≥ 1; got ${describe(burst)}`);
  }
  return { perSecond, burst };
}

/**
 * A token bucket: starts full (`burst` tokens), refills continuously at `perSecond`, never
 * holds more than `burst`. Pure: the caller passes the time (ms).
 *
 * @example
 * ```ts
 * import { TokenBucket } from "offset-frontier";
 * const b = new TokenBucket({ perSecond: 10, burst: 2 }, 0);
 * b.take(0); b.take(0);
 * b.available(0); // 0
 * b.waitMs(0); // 100: the next token
 * ```
 */
export class TokenBucket {
  readonly #rate: number; // tokens per ms
  readonly #burst: number;
  #tokens: number;
  #at: number;

  /**
   * A full bucket.
   * @param limit validated rate and burst
   * @param now the time it starts (ms)
   */
  constructor(limit: ResolvedRateLimit, now: number) {
    this.#rate = limit.perSecond / 1_000;
    this.#burst = limit.burst;
    this.#tokens = limit.burst;
    this.#at = now;
  }

  /** Tokens available at `now` (fractional while refilling). */
  available(now: number): number {
    if (now > this.#at) {
      this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#rate);
      this.#at = now; // a clock that goes back refills nothing
    }
    return this.#tokens;
  }

  /** Takes a token at `now`; `false` (nothing taken) when none is available. */
  take(now: number): boolean {
    if (this.available(now) < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds from `now` until a token is available (0: one is). */
  waitMs(now: number): number {
    const missing = 1 - this.available(now);
    return missing <= 0 ? 0 : Math.ceil(missing / this.#rate);
  }
}

/**
 * The dispatcher's start gate over a {@link TokenBucket}: says whether an attempt may start
 * now, and when it may not, wakes the dispatcher once a token is due.
 */
export class RateGate {
  /** Times a start had to wait for a token. */
  waits = 0;
  /** The validated rate and burst. */
  readonly limit: ResolvedRateLimit;
  readonly #bucket: TokenBucket;
  readonly #wake: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /**
   * A gate, its bucket full.
   * @param limit validated rate and burst
   * @param wake called once a token is due after a refusal (pumps the dispatcher)
   */
  constructor(limit: ResolvedRateLimit, wake: () => void) {
    this.limit = limit;
    this.#bucket = new TokenBucket(limit, Date.now());
    this.#wake = wake;
  }

  /** Tokens available now. */
  get tokens(): number {
    return this.#bucket.available(Date.now());
  }

  /** Whether an attempt may start now; when not, a wake-up is set for the next token. */
  ready(): boolean {
    const now = Date.now();
    if (this.#bucket.available(now) >= 1) return true;
    if (this.#timer === undefined && !this.#stopped) {
      this.waits++;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#wake();
      }, this.#bucket.waitMs(now));
    }
    return false;
  }

  /** An attempt starts: takes its token (only after {@link ready} said yes). */
  took(): void {
    this.#bucket.take(Date.now());
  }

  /** No more wake-ups (shutdown, failure). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
