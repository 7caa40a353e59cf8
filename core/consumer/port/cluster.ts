/**
 * Whether the Kafka cluster answers: the runner's view of outages. A binding reports
 * each failed attempt to reach the cluster (connect, group join, coordinator lookup, a
 * commit refused for want of a connection) and each sign of life (a join, an
 * acknowledged commit or dead letter). While the cluster is away the consumer
 * waits with capped exponential backoff; after `maxUnavailableMs` (default: forever)
 * it gives up with a {@link ClusterUnavailableError}.
 *
 * @module
 */
import { ClusterUnavailableError, InvalidArgumentError, describe } from "../../errors.ts";
import type { ProbeResult } from "./client.ts";

/** How a consumer waits for an unreachable cluster. */
export interface ClusterOptions {
  /**
   * Give up after the cluster was unreachable this long without a break: `done` (or
   * `start()`, while starting) rejects with a {@link ClusterUnavailableError}. Default
   * `Infinity`: wait until it is back.
   */
  maxUnavailableMs?: number;
  /** Delay before the second attempt. Default 500 ms. */
  initialDelayMs?: number;
  /** Largest delay between attempts (the delay doubles per failed attempt). Default 5,000 ms. */
  maxDelayMs?: number;
}

/**
 * `connecting` (starting: not reached yet, no attempt failed), `available` (it answered)
 * or `waiting` (an attempt failed: retrying with backoff).
 */
export type ClusterState = "connecting" | "available" | "waiting";

/** The cluster part of the consumer's metrics. */
export interface ClusterMetrics {
  /** Whether the consumer is waiting for the cluster. */
  state: ClusterState;
  /** While connecting or waiting: milliseconds since the start, or since the first failed attempt of this outage. */
  sinceMs: number | undefined;
  /** Failed attempts in this outage (0 when available). */
  attempts: number;
  /** The last failure of this outage (or of the last one, once available again). */
  lastError: unknown;
  /** Broker addresses named by the failures of this outage. */
  brokers: readonly string[];
  /** Outages since start (each one that ended, and the current one). */
  outages: number;
}

/** Payload of the `unavailable` event: an attempt to reach the cluster failed; the consumer waits and tries again. */
export interface UnavailableEvent {
  /** Milliseconds since the first failed attempt of this outage (at start: since the start). */
  sinceMs: number;
  /** Failed attempts in this outage, this one included. */
  attempts: number;
  /** This attempt's error. */
  lastError: unknown;
  /** Broker addresses named by the failures of this outage. */
  brokers: readonly string[];
  /** Milliseconds until the next attempt. */
  delayMs: number;
}

/** Payload of the `available` event: the cluster answered again after an outage. */
export interface AvailableEvent {
  /** How long the outage lasted (first failed attempt, or the start, to the answer). */
  downMs: number;
  /** Failed attempts during it. */
  attempts: number;
}

/** What the watch reports. */
export interface ClusterHooks {
  /** An attempt failed (the consumer waits). */
  unavailable(event: UnavailableEvent): void;
  /** The cluster is back. */
  available(event: AvailableEvent): void;
  /** `maxUnavailableMs` passed: the consumer must end with this error. */
  giveUp(error: ClusterUnavailableError): void;
}

function option(name: string, v: unknown, fallback: number, infinite: boolean): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || Number.isNaN(v) || v < 0 || (!infinite && !Number.isFinite(v))) {
    throw new InvalidArgumentError(`cluster.${name} must be a ${infinite ? "number ≥ 0 or Infinity" : "finite number ≥ 0"}; got ${describe(v)}`);
  }
  return v;
}

/**
 * Tracks one consumer's outages: state, attempts, the backoff before the next attempt,
 * and the give-up timer. Invariant: the give-up timer is armed exactly while `waiting`
 * (connecting included) and `maxUnavailableMs` is finite.
 *
 * @example
 * ```ts
 * import { ClusterWatch } from "./cluster.ts";
 * const watch = new ClusterWatch({ maxUnavailableMs: 60_000 }, {
 *   unavailable: (e) => console.log("waiting", e.attempts, e.delayMs),
 *   available: (e) => console.log("back after", e.downMs),
 *   giveUp: (error) => console.error(error.message),
 * });
 * const delayMs = watch.failed(new Error("ECONNREFUSED"), ["127.0.0.1:9092"]); // 500 (± jitter)
 * watch.recovered();
 * watch.close();
 * ```
 */
export class ClusterWatch {
  readonly #hooks: ClusterHooks;
  readonly #maxMs: number;
  readonly #initialMs: number;
  readonly #capMs: number;
  #since: number | undefined; // Date.now() of this outage's first failure (or the start); undefined: available
  #connecting = false; // started, not reached yet, nothing failed yet
  #attempts = 0;
  #lastError: unknown;
  #brokers: string[] = [];
  #outages = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  /**
   * A watch, available until the first failure.
   * @param options give-up bound and backoff
   * @param hooks where events go
   * @throws {InvalidArgumentError} for an out-of-range option
   */
  constructor(options: ClusterOptions | undefined, hooks: ClusterHooks) {
    this.#maxMs = option("maxUnavailableMs", options?.maxUnavailableMs, Infinity, true);
    this.#initialMs = option("initialDelayMs", options?.initialDelayMs, 500, false);
    this.#capMs = option("maxDelayMs", options?.maxDelayMs, 5_000, false);
    this.#hooks = hooks;
  }

  /** Whether the consumer is waiting for the cluster (or, starting, has not reached it yet). */
  get waiting(): boolean {
    return this.#since !== undefined;
  }

  /**
   * The consumer starts: until the cluster first answers, the time counts towards
   * `maxUnavailableMs` (an attempt can take seconds to fail).
   */
  connecting(): void {
    if (this.#closed || this.#since !== undefined) return;
    this.#begin(Date.now());
    this.#connecting = true;
  }

  /**
   * An attempt to reach the cluster failed. Starts (or continues) an outage, reports it,
   * and returns the milliseconds to wait before the next attempt.
   * @param error the attempt's error
   * @param brokers broker addresses it names (added to the outage's list)
   */
  failed(error: unknown, brokers: readonly string[] = []): number {
    if (this.#closed) return this.#capMs;
    const now = Date.now();
    if (this.#since === undefined) this.#begin(now);
    this.#connecting = false;
    this.#attempts++;
    this.#lastError = error;
    for (const b of brokers) if (!this.#brokers.includes(b)) this.#brokers.push(b);
    const base = Math.min(this.#capMs, this.#initialMs * Math.pow(2, Math.min(30, this.#attempts - 1)));
    const delayMs = Math.round(base * (1 - 0.2 * Math.random()));
    this.#hooks.unavailable({
      sinceMs: now - (this.#since ?? now),
      attempts: this.#attempts,
      lastError: error,
      brokers: [...this.#brokers],
      delayMs,
    });
    return delayMs;
  }

  /** The cluster answered: ends the outage (if any) and reports it (a start that never failed reports nothing). */
  recovered(): void {
    if (this.#since === undefined || this.#closed) return;
    const downMs = Date.now() - this.#since;
    const attempts = this.#attempts;
    const quiet = this.#connecting;
    this.#since = undefined;
    this.#connecting = false;
    this.#attempts = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (quiet) this.#outages--; // not an outage: the first attempt worked
    else this.#hooks.available({ downMs, attempts });
  }

  #begin(now: number): void {
    this.#since = now;
    this.#attempts = 0;
    this.#brokers = [];
    this.#outages++;
    if (this.#maxMs !== Infinity) this.#timer = setTimeout(() => this.#giveUp(), this.#maxMs);
  }

  /** A snapshot. */
  metrics(): ClusterMetrics {
    return {
      state: this.#since === undefined ? "available" : this.#connecting ? "connecting" : "waiting",
      sinceMs: this.#since === undefined ? undefined : Date.now() - this.#since,
      attempts: this.#attempts,
      lastError: this.#lastError,
      brokers: [...this.#brokers],
      outages: this.#outages,
    };
  }

  /** Stops the give-up timer for good (the consumer ended). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #giveUp(): void {
    this.#timer = undefined;
    if (this.#closed || this.#since === undefined) return;
    const error = new ClusterUnavailableError([...this.#brokers], Date.now() - this.#since, this.#attempts, this.#lastError);
    this.close();
    this.#hooks.giveUp(error);
  }
}

/** How long a give-up waits for the binding's direct attempt ({@link probeWithin}). */
export const PROBE_MS = 5_000;

/**
 * The give-up error named by the binding's direct attempt, when the client's own retries
 * outlasted the bound (no attempt had failed): its brokers and its cause, or `error` as it
 * was when the attempt failed itself or took more than {@link PROBE_MS}.
 * @param error the give-up error
 * @param probe the binding's probe
 */
export async function withProbe(error: ClusterUnavailableError, probe: () => Promise<ProbeResult>): Promise<ClusterUnavailableError> {
  const found = await probeWithin(probe, PROBE_MS);
  if (found === undefined) return error;
  const brokers = found.brokers.length > 0 ? found.brokers : error.brokers;
  return new ClusterUnavailableError(brokers, error.waitedMs, 0, found.error, found.brokers.length > 0 || found.error !== undefined);
}

/**
 * Runs a binding's direct attempt to reach the cluster, for at most `ms`: its result, or
 * `undefined` when it failed itself or took longer. Leaves no timer behind.
 * @param probe the binding's probe
 * @param ms the bound
 */
async function probeWithin(probe: () => Promise<ProbeResult>, ms: number): Promise<ProbeResult | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => timer = setTimeout(resolve, ms, undefined));
  try {
    return await Promise.race([probe().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
