/**
 * The retry policy of failing records: bounded exponential backoff with jitter, then
 * dead-letter the record or stop its partition. A failing record is never marked
 * complete just to let the frontier move.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../errors.ts";

/** What happens when a record's retries are used up. */
export type OnExhausted = "dead-letter" | "stop";

/** How failing records are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt (so `retries + 1` calls at most). Default 3; `Infinity` retries forever. */
  retries?: number;
  /** Delay before the first retry. Default 100 ms. */
  initialDelayMs?: number;
  /** Largest delay. Default 10,000 ms. */
  maxDelayMs?: number;
  /** Growth factor per retry. Default 2. */
  multiplier?: number;
  /** Fraction of each delay that is random, in [0, 1]: the delay is `d × (1 − jitter × random())`. Default 0.2. */
  jitter?: number;
  /**
   * When retries are used up: `"dead-letter"` (needs a dead-letter producer; the record
   * counts as complete once that produce is acknowledged) or `"stop"` (the partition
   * stops: no more records of it run, its safe position stays below the failed record).
   * Default: `"dead-letter"` when the client has a dead-letter producer, else `"stop"`.
   */
  onExhausted?: OnExhausted;
}

/** A validated {@link RetryPolicy} with every field set. */
export type ResolvedRetryPolicy = Required<RetryPolicy>;

/**
 * Validates a policy and fills in the defaults.
 * @param canDeadLetter whether a dead-letter producer exists (decides the default of `onExhausted`)
 * @throws {InvalidArgumentError} for an out-of-range field, or `"dead-letter"` without a producer
 */
export function resolveRetryPolicy(policy: RetryPolicy = {}, canDeadLetter = false): ResolvedRetryPolicy {
  const {
    retries = 3,
    initialDelayMs = 100,
    maxDelayMs = 10_000,
    multiplier = 2,
    jitter = 0.2,
    onExhausted = canDeadLetter ? "dead-letter" : "stop",
  } = policy;
  if (!(retries === Infinity || (Number.isInteger(retries) && retries >= 0))) {
    throw new InvalidArgumentError(`retry.retries must be a non-negative integer or Infinity; got ${describe(retries)}`);
  }
  for (const [name, v] of [["initialDelayMs", initialDelayMs], ["maxDelayMs", maxDelayMs]] as const) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new InvalidArgumentError(`retry.${name} must be a finite number ≥ 0; got ${describe(v)}`);
    }
  }
  if (typeof multiplier !== "number" || !Number.isFinite(multiplier) || multiplier < 1) {
    throw new InvalidArgumentError(`retry.multiplier must be a finite number ≥ 1; got ${describe(multiplier)}`);
  }
  if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1)) {
    throw new InvalidArgumentError(`retry.jitter must be a number in [0, 1]; got ${describe(jitter)}`);
  }
  if (onExhausted !== "dead-letter" && onExhausted !== "stop") {
    throw new InvalidArgumentError(`retry.onExhausted must be "dead-letter" or "stop"; got ${describe(onExhausted)}`);
  }
  if (onExhausted === "dead-letter" && !canDeadLetter) {
    throw new InvalidArgumentError(`retry.onExhausted is "dead-letter" but no dead-letter producer is configured`);
  }
  return { retries, initialDelayMs, maxDelayMs, multiplier, jitter, onExhausted };
}

/**
 * The delay before the next attempt after `attempt` failed (1 = the first call):
 * `min(maxDelayMs, initialDelayMs × multiplier^(attempt − 1))`, minus up to `jitter` of it.
 *
 * @example
 * ```ts
 * import { backoffDelay, resolveRetryPolicy } from "./retry.ts";
 * const p = resolveRetryPolicy({ initialDelayMs: 100, jitter: 0 });
 * backoffDelay(p, 1); // 100
 * backoffDelay(p, 3); // 400
 * ```
 */
export function backoffDelay(policy: ResolvedRetryPolicy, attempt: number, random: () => number = Math.random): number {
  const exp = policy.initialDelayMs * Math.pow(policy.multiplier, Math.max(0, attempt - 1));
  const base = Math.min(policy.maxDelayMs, exp);
  return Math.max(0, Math.round(base * (1 - policy.jitter * random())));
}

/** Whether a record that failed its `attempt`-th call may run again. */
export function canRetry(policy: ResolvedRetryPolicy, attempt: number): boolean {
  return attempt <= policy.retries;
}
