/**
 * What a {@link ParallelConsumer} is given: the record handler, its context, and the
 * consumer's options.
 *
 * @module
 */
import type { BatchOptions } from "./records/mod.ts";
import type { CommitOptions } from "./commits/mod.ts";
import { checkKnownOptions, type OptionNames } from "./known_options.ts";
import { describe, InvalidArgumentError } from "../errors.ts";
import type { DispatchOptions } from "./dispatch/mod.ts";
import type { EngineChoice } from "../tracker/engines.ts";
import type { ClusterOptions } from "./port/mod.ts";
import type { ConsumerListeners } from "./port/mod.ts";
import type { ConsumerLogger } from "./port/mod.ts";
import type { RateLimitOptions } from "./records/mod.ts";
import type { RetryPolicy } from "./records/mod.ts";
import type { StuckOptions } from "./records/mod.ts";
import type { TransactionalOptions, TransactionalPort } from "./port/mod.ts";
import type { Handler } from "./records/mod.ts";
import type { TracingSource } from "./port/mod.ts";

export type { Handler, RecordContext, TransactionalContext } from "./records/mod.ts";

/** Options of a {@link ParallelConsumer}. */
export interface ParallelConsumerOptions<M> extends DispatchOptions {
  /** Runs once per record (again on retries). Required unless `batch` (with its own handler) is given. */
  handler?: Handler<M>;
  /**
   * The batch handler instead of `handler`: started records are gathered (up to
   * `maxRecords`, waiting up to `maxWaitMs`) and handed to one call that may fail single
   * records (see batch.ts). With `transactional` each record's context in the batch gains
   * `send`: its outputs go in its own partition's transaction when it completes.
   */
  batch?: BatchOptions<M>;
  /** How failing records are retried and what happens after the last retry. */
  retry?: RetryPolicy;
  /** Commit mode, interval, timeout and metadata. */
  commit?: CommitOptions;
  /** Orderly revoke: how long running records may take before the final commit. Default 5,000 ms. */
  drainTimeoutMs?: number;
  /** Shutdown: how long running records may take before the final commit and disconnect. Default 10,000 ms. */
  shutdownGraceMs?: number;
  /**
   * Aborting it shuts the consumer down gracefully. Aborted while `start()` still waits
   * for the cluster, it ends that wait: `start()` resolves, the consumer is `stopped`.
   */
  signal?: AbortSignal;
  /** Broker outages: the backoff between attempts and when to give up (default: never). */
  cluster?: ClusterOptions;
  /** Tracker engine (default `"auto"`). */
  engine?: EngineChoice;
  /** Tracker capacity per partition (default 2^24 entries). */
  capacity?: number;
  /** Event listeners. */
  on?: ConsumerListeners;
  /**
   * Where the consumer writes what no listener heard (logger.ts): an `error` event without an
   * `error` listener (a partition stopped, failing dead letters or commits, the client's
   * failure) and an outage without an `unavailable` listener, one line per change of state.
   * Default: one line on stderr (`console.warn`/`console.error`); `false`: nothing.
   */
  logger?: ConsumerLogger | false;
  /**
   * Handler starts (attempts, retries included) per second across the consumer, a token
   * bucket holding up to `burst`. Records waiting for a token stay queued and count against
   * the high mark and `maxBuffered`, which pause fetching. Default: no limit.
   */
  rateLimit?: RateLimitOptions;
  /**
   * Stuck records: one unfinished `maxPendingMs` after its first attempt started is
   * reported (`stuck` event) and, by `action`, dead-lettered (its attempt's `signal`
   * aborted, a late completion ignored), or its partition stops, or only reported.
   * Default: not watched. (Not `commit.stallMs`, which holds starts while commits fail.)
   */
  stuck?: StuckOptions;
  /**
   * Exactly-once mode (see transactions.ts): the handler's context gains `send`, and each
   * commit cycle commits, per partition, one transaction with the outputs of exactly the
   * records it calls finished plus the offset and completed set. `port`: the client's
   * transactional plumbing (the KafkaJS binding makes it from its `transactional` option).
   */
  transactional?: TransactionalOptions & { port: TransactionalPort };
  /**
   * Tracing (tracing.ts): a tracer the runner calls around every attempt and batch handler
   * call, or a function that loads one at `start()`. The bindings make it from their own
   * `tracing` option (OpenTelemetry, on when `@opentelemetry/api` is installed). Default: none.
   */
  tracing?: TracingSource<M>;
}


/** Every option name of {@link ParallelConsumerOptions}, nested ones by object. */
const CONSUMER_OPTION_NAMES: {
  readonly top: OptionNames<ParallelConsumerOptions<unknown>>;
  readonly retry: OptionNames<RetryPolicy>;
  readonly commit: OptionNames<CommitOptions>;
  readonly completedSet: OptionNames<{ budget?: number }>;
  readonly cluster: OptionNames<ClusterOptions>;
  readonly on: OptionNames<ConsumerListeners>;
  readonly rateLimit: OptionNames<RateLimitOptions>;
  readonly stuck: OptionNames<StuckOptions>;
  readonly batch: OptionNames<BatchOptions<unknown>>;
} = {
  top: {
    handler: true, retry: true, commit: true, drainTimeoutMs: true, shutdownGraceMs: true, signal: true, cluster: true,
    engine: true, capacity: true, on: true, transactional: true, ordering: true, concurrency: true,
    maxInFlightPerPartition: true, highWaterMark: true, lowWaterMark: true, maxBuffered: true,
    rateLimit: true, stuck: true, batch: true, logger: true, tracing: true,
  },
  retry: { retries: true, initialDelayMs: true, maxDelayMs: true, multiplier: true, jitter: true, onExhausted: true },
  commit: { mode: true, intervalMs: true, timeoutMs: true, stallMs: true, maxUncommitted: true, completedSet: true, metadata: true },
  completedSet: { budget: true },
  cluster: { maxUnavailableMs: true, initialDelayMs: true, maxDelayMs: true },
  rateLimit: { perSecond: true, burst: true },
  stuck: { maxPendingMs: true, action: true },
  batch: { maxRecords: true, maxWaitMs: true, handler: true },
  on: {
    commit: true, pause: true, resume: true, retry: true, deadLetter: true, error: true, claim: true, stall: true,
    transaction: true, unavailable: true, available: true, stuck: true,
  },
};

/**
 * Refuses an unknown option name anywhere in `options` (top level and the nested
 * objects), naming it and the nearest known one. `extra`: more top-level names (a
 * binding's own options).
 * @throws {InvalidArgumentError} for an unknown name
 */
export function checkConsumerOptions(options: object, extra: Readonly<Record<string, true>> = {}): void {
  const n = CONSUMER_OPTION_NAMES;
  const o = options as Record<string, unknown>;
  checkKnownOptions("options", o, { ...n.top, ...extra });
  checkKnownOptions("options.retry", o.retry, n.retry);
  checkKnownOptions("options.commit", o.commit, n.commit);
  checkKnownOptions("options.commit.completedSet", (o.commit as Record<string, unknown> | undefined)?.completedSet, n.completedSet);
  checkKnownOptions("options.cluster", o.cluster, n.cluster);
  checkKnownOptions("options.on", o.on, n.on);
  checkKnownOptions("options.rateLimit", o.rateLimit, n.rateLimit);
  checkKnownOptions("options.stuck", o.stuck, n.stuck);
  checkKnownOptions("options.batch", o.batch, n.batch);
}

/**
 * A duration option: `fallback` when not given, else a number ≥ 0.
 * @throws {InvalidArgumentError} naming the option and the value
 */
export function nonNegative(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !(v >= 0) || Number.isNaN(v)) {
    throw new InvalidArgumentError(`${name} must be a number ≥ 0; got ${describe(v)}`);
  }
  return v;
}

/**
 * A count option: an integer ≥ 1 or Infinity (undefined when not given).
 * @throws {InvalidArgumentError} naming the option and the value
 */
export function countOrInfinity(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (v !== Infinity && !(typeof v === "number" && Number.isInteger(v) && v >= 1)) {
    throw new InvalidArgumentError(`${name} must be an integer ≥ 1 or Infinity; got ${describe(v)}`);
  }
  return v;
}

/**
 * The handler choice: a record `handler`, or `batch.handler` instead (with `transactional`
 * too: each `records[i].send` stages outputs for record `i` alone, see batch.ts).
 * @param options the consumer's options
 * @param batched whether `batch` was given (and resolved)
 * @throws {InvalidArgumentError} naming what is missing or may not be combined
 */
export function checkHandlerChoice(options: { handler?: unknown }, batched: boolean): void {
  if (batched ? options.handler !== undefined : typeof options?.handler !== "function") {
    throw new InvalidArgumentError(
      batched
        ? `handler and batch.handler cannot both be given: batch.handler takes the records`
        : `handler must be a function; got ${describe(options?.handler)}`,
    );
  }
}
