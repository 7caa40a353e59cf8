/**
 * The parallel consumer: runs an async handler over delivered records on a worker
 * pool and commits only safe positions. It ties a {@link ConsumerClient} (the Kafka
 * client binding), a {@link Frontier} (one tracker per partition assignment), a
 * {@link Dispatcher} (ordering, concurrency, backpressure), a {@link CommitScheduler}
 * (coalesced commits) and the retry policy.
 *
 * Lifecycle rules it keeps:
 * - every batch is registered in its partition's tracker before any of its records runs;
 * - a new tracker for every new assignment; records of an ended assignment that finish
 *   later are rejected by its revoked tracker, never counted in a later one;
 * - orderly revoke: stop dispatching, drain within `drainTimeoutMs`, commit
 *   best-effort, then {@link Frontier.revoke}; lost partitions: {@link Frontier.lose},
 *   never committed;
 * - shutdown (the `signal` or {@link ParallelConsumer.shutdown}): stop fetching, let
 *   running records finish within `shutdownGraceMs`, commit, disconnect;
 * - an unreachable cluster is waited for (the binding retries with the backoff of
 *   {@link ClusterWatch}), forever unless `cluster.maxUnavailableMs` is set; the signal
 *   or a shutdown ends that wait;
 * - a failing record is retried with backoff, then dead-lettered (complete only once
 *   the dead-letter produce is acknowledged) or its partition stops; it is never
 *   marked complete to let the frontier move.
 *
 * @module
 */
import type { ClientSink, CommitOffset, CommittedPosition, ConsumerClient, DeliveredBatch, TopicPartition } from "./client.ts";
import { type CommitOptions, CommitScheduler } from "./commit_scheduler.ts";
import { type DispatchOptions, Dispatcher, type Lane, Work } from "./dispatcher.ts";
import { Completion } from "../tracker/engine.ts";
import type { EngineChoice } from "../tracker/engines.ts";
import { CapacityError, type ClusterUnavailableError, InvalidArgumentError, OffsetFrontierError, describe } from "../errors.ts";
import { type ClusterOptions, ClusterWatch } from "./cluster.ts";
import { type CompletedSet, decodeCompletedSet, unionOfClaims } from "../tracker/completed_set.ts";
import { Frontier, type PartitionCommit } from "../tracker/frontier.ts";
import {
  type ConsumerEvents,
  type ConsumerListeners,
  type ConsumerMetrics,
  EventHub,
  type Listener,
  type PartitionMetrics,
} from "./metrics.ts";
import { type ResolvedRetryPolicy, type RetryPolicy, backoffDelay, canRetry, resolveRetryPolicy } from "./retry.ts";
import {
  checkOutput,
  claimEnd,
  emptyTransactionMetrics,
  type OutputRecord,
  resolveTransactionalOptions,
  TransactionFailedError,
  type TransactionalOptions,
  type TransactionalPort,
  type TransactionalSend,
  type TransactionMetrics,
  TransactionStage,
} from "./transactions.ts";

/** What the handler gets besides the record. */
export interface RecordContext {
  /** Topic of the record. */
  readonly topic: string;
  /** Partition of the record. */
  readonly partition: number;
  /** Offset of the record. */
  readonly offset: number;
  /** 1 on the first call, 2 on the first retry, … */
  readonly attempt: number;
  /** Aborted when the work is abandoned: the partition was lost, or revoked and the drain bound expired, or the shutdown grace expired; a completion after that does not count. */
  readonly signal: AbortSignal;
  /**
   * Exactly-once mode only (`transactional`): stages records to produce; they are
   * committed in one transaction with this record's completion, and only if this attempt
   * succeeds. Absent otherwise.
   */
  readonly send?: (...records: OutputRecord[]) => void;
}

/** The user's record handler. A thrown error or rejected promise is a failed attempt. */
export type Handler<M> = (message: M, context: RecordContext) => unknown;

/** Options of a {@link ParallelConsumer}. */
export interface ParallelConsumerOptions<M> extends DispatchOptions {
  /** Runs once per record (again on retries). */
  handler: Handler<M>;
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
   * Exactly-once mode (see transactions.ts): the handler's context gains `send`, and each
   * commit cycle commits, per partition, one transaction with the outputs of exactly the
   * records it calls finished plus the offset and completed set. `port`: the client's
   * transactional plumbing (the KafkaJS binding makes it from its `transactional` option).
   */
  transactional?: TransactionalOptions & { port: TransactionalPort };
}

/** The handler's context in exactly-once mode: {@link RecordContext} with `send`. */
export type TransactionalContext = RecordContext & TransactionalSend;

/** A record failed for good under `onExhausted: "stop"` (or its dead letter could not be produced): its partition stopped. */
export class PartitionStoppedError extends OffsetFrontierError {
  /** Topic of the failed record. */
  readonly topic: string;
  /** Partition that stopped. */
  readonly partition: number;
  /** Offset of the failed record: the partition's safe position stays at or below it. */
  readonly offset: number;
  /** The handler's (or the dead-letter producer's) last error. */
  override readonly cause: unknown;
  /**
   * The error of a partition stopped at `offset`.
   * @param topic topic
   * @param partition partition
   * @param offset offset of the failed record
   * @param cause last error
   */
  constructor(topic: string, partition: number, offset: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`partition ${topic}/${partition} stopped: the record at offset ${offset} failed for good (${why})`);
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.cause = cause;
  }
}

/** Where a consumer is in its life. */
export type ConsumerState = "created" | "starting" | "running" | "stopping" | "stopped" | "failed";

const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
// Handles of directly run records that finished, applied in one tracker call (#runDirect).
let doneScratch = new Float64Array(1024);

function sleep(ms: number): { promise: Promise<"timeout">; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

function nonNegative(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !(v >= 0) || Number.isNaN(v)) {
    throw new InvalidArgumentError(`${name} must be a number ≥ 0; got ${describe(v)}`);
  }
  return v;
}

/**
 * A parallel consumer over one {@link ConsumerClient}.
 *
 * @example
 * ```ts
 * import { ParallelConsumer, type ConsumerClient } from "offset-frontier";
 * declare const client: ConsumerClient<{ value: string }>;
 * const controller = new AbortController();
 * const consumer = new ParallelConsumer(client, {
 *   ordering: "key",
 *   concurrency: 64,
 *   handler: async (message, { topic, partition, offset }) => { console.log(topic, partition, offset, message.value); },
 *   signal: controller.signal,
 * });
 * await consumer.start();
 * // later: controller.abort(); await consumer.done;
 * ```
 */
export class ParallelConsumer<M> {
  /** Settles when the consumer stopped: resolves after a graceful shutdown, rejects when the client failed for good. */
  readonly done: Promise<void>;
  /** Resolves when the consumer stopped, whichever way (never rejects): for cleanup such as removing signal handlers. */
  readonly closed: Promise<void>;
  readonly #client: ConsumerClient<M>;
  readonly #handler: Handler<M>;
  readonly #frontier: Frontier;
  readonly #dispatcher: Dispatcher<M>;
  readonly #scheduler: CommitScheduler;
  readonly #retry: ResolvedRetryPolicy;
  readonly #events = new EventHub();
  readonly #drainMs: number;
  readonly #graceMs: number;
  readonly #keyOf: ((message: M) => string | undefined) | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #completedSets: boolean;
  readonly #stallMs: number;
  readonly #watch: ClusterWatch;
  readonly #stopWaiting = new AbortController(); // the sink's signal: shutdown began or the consumer gave up
  #failure: unknown; // why the consumer failed, once `failed`
  #stallTimer: ReturnType<typeof setInterval> | undefined;
  #lastAckAt = 0; // Date.now() of the last acknowledged commit (or the start)
  #completedAtAck = 0; // #completed + #skipped then
  #assignSeq = 0; // counts assignments: a failure of an earlier one's commit holds nothing
  #refused = false; // a commit was refused since the last acknowledgement
  #state: ConsumerState = "created";
  #inDirect = false; // #runDirect is on the stack
  #orderly = false; // an orderly revoke began and no new assignment came yet
  #shutdown: Promise<void> | undefined;
  #resolveDone!: () => void;
  #rejectDone!: (error: unknown) => void;
  #onAbort: (() => void) | undefined;
  #completed = 0;
  #skipped = 0;
  #failures = 0;
  #retries = 0;
  #deadLettered = 0;
  #commits = 0;
  #commitFailures = 0;
  #lastCommitMs: number | undefined;
  #maxCommitMs: number | undefined;
  readonly #tx: { port: TransactionalPort; stage: TransactionStage<Lane<M>>; timeoutMs: number; m: TransactionMetrics } | undefined;

  /**
   * A consumer over `client`, not started yet.
   * @param client the Kafka client binding
   * @param options handler, ordering, bounds, retry, commit and shutdown options
   * @throws {InvalidArgumentError} for bad options
   */
  constructor(client: ConsumerClient<M>, options: ParallelConsumerOptions<M>) {
    if (typeof options?.handler !== "function") {
      throw new InvalidArgumentError(`handler must be a function; got ${describe(options?.handler)}`);
    }
    this.#client = client;
    this.#handler = options.handler;
    const txo = options.transactional;
    if (txo !== undefined && (txo === null || typeof txo.port?.commit !== "function" || typeof txo.port?.open !== "function")) {
      throw new InvalidArgumentError(`transactional.port must be a TransactionalPort; got ${describe(txo?.port)}`);
    }
    this.#tx = txo === undefined ? undefined : {
      port: txo.port,
      stage: new TransactionStage<Lane<M>>(),
      timeoutMs: resolveTransactionalOptions(txo).timeoutMs,
      m: emptyTransactionMetrics(),
    };
    const canDeadLetter = this.#tx ? typeof this.#tx.port.deadLetter === "function" : typeof client.deadLetter === "function";
    this.#retry = resolveRetryPolicy(options.retry, canDeadLetter);
    this.#drainMs = nonNegative("drainTimeoutMs", options.drainTimeoutMs, 5_000);
    this.#graceMs = nonNegative("shutdownGraceMs", options.shutdownGraceMs, 10_000);
    const completedSet = options.commit?.completedSet;
    if (options.commit?.metadata !== undefined && completedSet !== false) {
      throw new InvalidArgumentError(
        "commit.metadata replaces the completed set in the commit metadata: pass commit.completedSet: false with it",
      );
    }
    this.#frontier = new Frontier({
      ...(options.engine !== undefined ? { engine: options.engine } : {}),
      ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
      ...(completedSet !== undefined ? { completedSet } : {}),
    });
    this.#completedSets = completedSet !== false;
    const mode = options.commit?.mode ?? "eager";
    this.#stallMs = nonNegative("commit.stallMs", options.commit?.stallMs, mode === "interval" ? 3 * (options.commit?.intervalMs ?? 1_000) : 1_000);
    this.#dispatcher = new Dispatcher<M>(options, {
      start: (w) => this.#start(w),
      pause: (lane, reason) => {
        this.#client.pause([lane]);
        if (this.#events.has("pause")) {
          this.#events.emit("pause", { topic: lane.topic, partition: lane.partition, reason, retained: lane.retained });
        }
      },
      resume: (lane) => {
        if (!this.#live() || lane.held) return; // a held lane resumes once its claim is read
        this.#client.resume([lane]);
        if (this.#events.has("resume")) {
          this.#events.emit("resume", {
            topic: lane.topic,
            partition: lane.partition,
            pausedMs: Date.now() - lane.pausedAt,
            retained: lane.retained,
          });
        }
      },
    });
    const keyOf = client.keyOf;
    this.#keyOf = this.#dispatcher.options.ordering === "key" && keyOf ? keyOf.bind(client) : undefined;
    this.#scheduler = new CommitScheduler(this.#frontier, {
      send: (offsets) => {
        const seq = this.#assignSeq;
        return (this.#tx ? this.#txCommit(offsets) : this.#client.commit(offsets)).catch((error: unknown) => {
          // Refused (not timed out) within the current assignment: commits cannot land now.
          if (seq === this.#assignSeq) this.#hold();
          throw error;
        });
      },
      include: (topic, partition) => this.#dispatcher.lane(topic, partition) !== undefined,
      committed: (offsets, latencyMs) => this.#committed(offsets, latencyMs),
      failed: (offsets, error) => {
        this.#commitFailures++;
        this.#events.emit("error", { kind: "commit", error, ...(offsets.length === 1 ? offsets[0] : {}) });
      },
    }, this.#tx ? { ...options.commit, timeoutMs: this.#tx.timeoutMs + 1_000 } : options.commit); // the port bounds each transaction
    for (const [event, listener] of Object.entries(options.on ?? {})) {
      if (listener) this.#events.on(event as keyof ConsumerEvents, listener as Listener<unknown>);
    }
    this.#watch = new ClusterWatch(options.cluster, {
      unavailable: (e) => this.#events.emit("unavailable", e),
      available: (e) => this.#events.emit("available", e),
      giveUp: (error) => this.#giveUp(error),
    });
    this.#signal = options.signal;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#rejectDone = reject;
    });
    this.closed = this.done.then(() => {}, () => {});
    // A client failure is reported through `done` and the `error` event, never as an unhandled rejection.
  }

  /** Where the consumer is in its life. */
  get state(): ConsumerState {
    return this.#state;
  }

  /** Adds an event listener; returns a function that removes it. */
  on<K extends keyof ConsumerEvents>(event: K, listener: Listener<ConsumerEvents[K]>): () => void {
    return this.#events.on(event, listener);
  }

  /**
   * Connects the client and starts consuming. Resolves once consuming has begun (the
   * group was joined), or once the consumer stopped because `signal` aborted (or
   * {@link shutdown} was called) while it waited for the cluster: check {@link state}.
   * @throws whatever the client's start threw (the consumer is then `failed`), e.g. a
   *   {@link ClusterUnavailableError} after `cluster.maxUnavailableMs`
   */
  async start(): Promise<void> {
    if (this.#state !== "created") throw new InvalidArgumentError(`start() was already called (state ${this.#state})`);
    this.#state = "starting";
    if (this.#signal?.aborted) {
      this.#state = "stopped";
      this.#resolveDone();
      return;
    }
    const sink: ClientSink<M> = {
      assigned: (partitions, committed, incremental) => this.#assigned(partitions, committed, incremental === true),
      revoking: (partitions) => this.#revoking(partitions),
      lost: (partitions) => this.#lost(partitions),
      deliver: (batch) => this.#deliver(batch),
      failed: (error) => this.#failed(error),
      unavailable: (error, brokers) => this.#watch.failed(error, brokers),
      available: () => this.#watch.recovered(),
      signal: this.#stopWaiting.signal,
    };
    this.#scheduler.start();
    this.#watch.connecting();
    this.#lastAckAt = Date.now();
    if (this.#stallMs !== Infinity) {
      this.#stallTimer = setInterval(() => this.#checkStall(), Math.max(50, Math.min(1_000, this.#stallMs / 4)));
      (this.#stallTimer as { unref?: () => void }).unref?.();
    }
    if (this.#signal) {
      // Listened to from here on: an abort while the start waits for the cluster ends it.
      this.#onAbort = () => void this.shutdown();
      this.#signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    try {
      await this.#client.start(sink);
    } catch (error) {
      if ((this.#state as ConsumerState) === "failed") throw this.#failure; // e.g. gave up waiting for the cluster
      if (this.#shutdown) return void (await this.#shutdown); // stopped while starting
      this.#failed(error);
      throw error;
    }
    if ((this.#state as ConsumerState) === "failed") throw this.#failure;
    if (this.#shutdown) return void (await this.#shutdown);
    if (this.#state === "starting") this.#state = "running";
  }

  /**
   * Graceful shutdown: stop fetching, let running records finish within the grace,
   * commit the safe positions, disconnect. Idempotent; resolves when done.
   * @param graceMs overrides `shutdownGraceMs`
   */
  shutdown(graceMs: number = this.#graceMs): Promise<void> {
    this.#shutdown ??= this.#doShutdown(graceMs);
    return this.#shutdown;
  }

  async #doShutdown(graceMs: number): Promise<void> {
    if (this.#state === "stopped" || this.#state === "failed") return;
    this.#state = "stopping";
    this.#stopWaiting.abort(new Error("the consumer is shutting down"));
    this.#signal?.removeEventListener("abort", this.#onAbort!);
    try {
      this.#client.stopFetching();
    } catch (error) {
      this.#events.emit("error", { kind: "client", error });
    }
    const lanes = [...this.#dispatcher.lanes()];
    const until = Date.now() + graceMs;
    for (const lane of lanes) this.#dispatcher.stopLane(lane, "draining", until);
    this.#dispatcher.pump(); // what the drain kept (records below the highest started offset)
    const grace = sleep(graceMs);
    const outcome = await Promise.race([Promise.all(lanes.map((l) => l.idle())), grace.promise]);
    grace.cancel();
    this.#dispatcher.halt();
    if (outcome === "timeout") {
      // Whatever finishes from now on is not counted: the commit reflects the grace's end.
      for (const lane of lanes) lane.abandoned = true;
      for (const lane of lanes) lane.controller.abort(new Error("shutdown grace expired"));
    }
    this.#scheduler.halt();
    // During an outage the last commits cannot be confirmed in time: they get what is left of
    // the grace (at least a second, should the cluster be back), then the shutdown goes on;
    // nothing unacknowledged moves `confirmed`.
    const bounded = <T>(work: Promise<T>): Promise<unknown> => {
      if (!this.#watch.waiting) return work;
      const left = sleep(Math.max(1_000, until - Date.now()));
      return Promise.race([work, left.promise]).finally(() => left.cancel());
    };
    await bounded(this.#scheduler.flush());
    const finals: CommitOffset[] = [];
    for (const lane of [...this.#dispatcher.lanes()]) {
      const f = this.#frontier.revoke(lane.topic, lane.partition);
      if (f && !this.#tx) finals.push(f); // transactional: what finished after the flush is redone
      this.#dispatcher.removeLane(lane);
    }
    if (this.#tx) await this.#tx.port.close().catch((error: unknown) => this.#events.emit("error", { kind: "client", error }));
    if (finals.length > 0) {
      // Completions that landed after the flush (none unless a handler ignored the grace).
      await bounded(this.#client.commit(finals).catch((error: unknown) => {
        this.#commitFailures++;
        this.#events.emit("error", { kind: "commit", error });
      }));
    }
    clearInterval(this.#stallTimer);
    this.#watch.close();
    this.#frontier.close();
    try {
      await this.#client.close();
    } catch (error) {
      this.#events.emit("error", { kind: "client", error });
    }
    if (this.#state === "stopping") this.#state = "stopped";
    this.#resolveDone();
  }

  /** A snapshot per partition and totals. */
  metrics(): ConsumerMetrics {
    const partitions: PartitionMetrics[] = [];
    const now = Date.now();
    for (const lane of this.#dispatcher.lanes()) {
      const t = lane.tracker;
      if (t.revoked) continue;
      const s = t.stats();
      partitions.push({
        topic: lane.topic,
        partition: lane.partition,
        state: lane.state,
        paused: lane.paused,
        pausedMs: lane.pausedMs + (lane.paused ? now - lane.pausedAt : 0),
        pending: s.pending,
        blocked: s.blocked,
        retained: s.retained,
        queued: lane.queued,
        inFlight: lane.inFlight,
        oldestPendingOffset: s.oldestPendingOffset,
        oldestPendingAgeMs: s.oldestPendingAgeMs,
        delivered: s.delivered,
        safe: s.safe,
        confirmed: this.#frontier.positions(lane.topic, lane.partition)?.confirmed,
        lastCommitLatencyMs: lane.lastCommitLatencyMs,
      });
    }
    return {
      partitions,
      running: this.#dispatcher.running,
      retained: partitions.reduce((n, p) => n + p.retained, 0),
      completed: this.#completed,
      skipped: this.#skipped,
      stalled: this.#dispatcher.held,
      failures: this.#failures,
      retries: this.#retries,
      deadLettered: this.#deadLettered,
      commits: this.#commits,
      commitFailures: this.#commitFailures,
      lastCommitLatencyMs: this.#lastCommitMs,
      maxCommitLatencyMs: this.#maxCommitMs,
      ...(this.#tx ? { transactions: { ...this.#tx.m, ready: this.#tx.stage.size } } : {}),
      cluster: this.#watch.metrics(),
    };
  }

  #live(): boolean {
    return this.#state === "running" || this.#state === "starting";
  }

  // ---- client events ----

  #assigned(partitions: readonly TopicPartition[], committed?: Promise<readonly CommittedPosition[]>, incremental = false): void {
    // Validated whole before anything changes: a bad or repeated partition leaves the old assignment as it was.
    const listed = new Set<string>();
    const problem = (): string | undefined => {
      if (!Array.isArray(partitions)) return `an array of partitions; got ${describe(partitions)}`;
      for (const p of partitions as readonly Partial<TopicPartition>[]) {
        const { topic, partition } = p ?? {};
        if (typeof topic !== "string" || topic.length === 0) return `topic names; got ${describe(topic)}`;
        if (typeof partition !== "number" || !Number.isInteger(partition) || partition < 0 || partition > 2147483647) {
          return `partitions in [0, 2^31); got ${describe(partition)} for topic ${JSON.stringify(topic)}`;
        }
        const key = tpKey(topic, partition);
        if (listed.has(key)) return `each partition once; got topic ${JSON.stringify(topic)} partition ${partition} twice`;
        listed.add(key);
      }
      return undefined;
    };
    const bad = problem();
    if (bad !== undefined) {
      void committed?.catch(() => {}); // not used: no unhandled rejection
      throw new InvalidArgumentError(`assigned() takes ${bad}; the assignment is unchanged`);
    }
    if (incremental) {
      // Cooperative: the lanes already assigned carry on; only new partitions get a lane.
      partitions = partitions.filter((p) => this.#dispatcher.lane(p.topic, p.partition) === undefined);
      if (partitions.length === 0) {
        void committed?.catch(() => {});
        return;
      }
    }
    const keep = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    const finals: PartitionCommit[] = [];
    if (this.#tx && !incremental) {
      const gone = [...this.#dispatcher.lanes()].filter((l) => !keep.has(tpKey(l.topic, l.partition)));
      if (gone.length > 0) void this.#tx.port.release(gone).catch(() => {});
    }
    for (const lane of incremental ? [] : [...this.#dispatcher.lanes()]) {
      // Still ours after an orderly revoke: its final commit is legitimate. Anything else: lost.
      if (this.#orderly && keep.has(tpKey(lane.topic, lane.partition))) {
        const f = this.#frontier.revoke(lane.topic, lane.partition);
        if (f && !this.#tx) finals.push(f); // transactional: the revoke's flush was the final transaction
      } else {
        this.#frontier.lose(lane.topic, lane.partition);
      }
      this.#dispatcher.removeLane(lane);
    }
    this.#orderly = false;
    if (!incremental) {
      // A new assignment starts with nothing at risk: what the old one finished is committed or gone.
      this.#assignSeq++;
      this.#lastAckAt = Date.now();
      this.#completedAtAck = this.#completed + this.#skipped;
      this.#refused = false;
      this.#setHeld(false);
    }
    const lanes: Lane<M>[] = [];
    for (const { topic, partition } of partitions) {
      const tracker = this.#frontier.assign(topic, partition);
      const lane = this.#dispatcher.addLane(topic, partition, tracker);
      if (this.#state === "stopping" || this.#state === "stopped") this.#dispatcher.stopLane(lane, "draining");
      lanes.push(lane);
    }
    this.#scheduler.addFinal(finals);
    if (this.#tx) {
      this.#tx.stage.prune((l) => l.ended); // what ended assignments staged: never committed, redone
      void committed?.catch(() => {}); // read again after fencing
      // Every assignment fences anew, kept partitions too: the client does not say which
      // generation this is, so a member that owned a partition in between (a zombie now)
      // may hold a newer producer epoch than ours.
      this.#txOpen(lanes, new Map());
    } else if (committed !== undefined && this.#completedSets && lanes.length > 0) {
      // Held until the claims are read: no batch is registered before its claim is known.
      for (const lane of lanes) lane.held = true;
      this.#client.pause(lanes);
      committed.then(
        (positions) => this.#claims(lanes, positions),
        (error: unknown) => {
          this.#events.emit("error", { kind: "committed-read", error });
          for (const lane of lanes) {
            const mine = lane.ended ? undefined : this.#frontier.recall(lane.topic, lane.partition);
            if (mine !== undefined) this.#useClaim(lane, mine);
          }
          this.#release(lanes);
        },
      );
    } else {
      void committed?.catch(() => {}); // not used: no unhandled rejection
      for (const lane of lanes) {
        // Nothing to read: what this consumer finished in its own last assignment still counts.
        const mine = this.#frontier.recall(lane.topic, lane.partition);
        if (mine !== undefined) this.#useClaim(lane, mine);
      }
    }
  }

  #useClaim(lane: Lane<M>, claim: CompletedSet): void {
    lane.claim = claim;
    this.#frontier.inherit(lane.topic, lane.partition, claim);
  }

  /** Decodes each held lane's committed metadata into its claim, then releases the lanes. */
  #claims(lanes: readonly Lane<M>[], positions: readonly CommittedPosition[]): void {
    const byKey = new Map(positions.map((p) => [tpKey(p.topic, p.partition), p]));
    for (const lane of lanes) {
      if (lane.ended) continue;
      const p = byKey.get(tpKey(lane.topic, lane.partition));
      const offset = p?.offset;
      let claim: CompletedSet | undefined;
      let ignored: string | undefined;
      if (offset === undefined) ignored = "no committed offset";
      else {
        const r = decodeCompletedSet(lane.topic, lane.partition, offset, p?.metadata);
        if (r.ok) claim = r.set;
        else ignored = r.reason;
      }
      // Transactional: only a committed transaction proves a record's outputs exist.
      const mine = this.#tx ? undefined : this.#frontier.recall(lane.topic, lane.partition, offset);
      const known = claim !== undefined && mine !== undefined ? unionOfClaims(claim, mine) : claim ?? mine;
      if (known !== undefined) this.#useClaim(lane, known);
      if (this.#events.has("claim")) {
        this.#events.emit("claim", {
          topic: lane.topic,
          partition: lane.partition,
          offset,
          finished: claim?.finishedCount() ?? 0,
          end: claim?.end,
          ...(ignored !== undefined ? { ignored } : {}),
        });
      }
    }
    this.#release(lanes);
  }

  /** Ends the hold of lanes whose claims are known; fetching resumes unless something else pauses them. */
  #release(lanes: readonly Lane<M>[]): void {
    const resume: Lane<M>[] = [];
    for (const lane of lanes) {
      if (lane.ended || !lane.held) continue;
      lane.held = false;
      if (!lane.paused && lane.state === "active") resume.push(lane);
    }
    if (resume.length > 0 && this.#live()) this.#client.resume(resume);
  }

  async #revoking(partitions?: readonly TopicPartition[]): Promise<void> {
    this.#orderly = true;
    const lanes = partitions
      ? partitions.map((p) => this.#dispatcher.lane(p.topic, p.partition)).filter((l): l is Lane<M> => !!l)
      : [...this.#dispatcher.lanes()];
    const until = Date.now() + this.#drainMs;
    for (const lane of lanes) this.#dispatcher.stopLane(lane, "draining", until);
    this.#dispatcher.pump();
    // Commit what is safe right now, synchronously when no commit is in flight: a client
    // that rejoins at once (KafkaJS) then sends it ahead of its JoinGroup, while the old
    // generation still may commit. The commit after the drain is best-effort.
    const early = this.#scheduler.urgent();
    const bound = sleep(this.#drainMs);
    await Promise.race([Promise.all(lanes.map((l) => l.idle())), bound.promise]);
    bound.cancel();
    // Past the bound, what still runs is redone by the next owner: its completions no longer
    // count (as after the shutdown grace), and its handlers are told now, not when the next
    // assignment arrives, so one that stops early writes nothing late.
    for (const lane of lanes) {
      if (!lane.isIdle && !lane.controller.signal.aborted) {
        lane.abandoned = true;
        lane.controller.abort(new Error(`partition ${lane.topic}/${lane.partition} is being revoked: drain bound of ${this.#drainMs} ms expired`));
      }
    }
    await early;
    await this.#scheduler.flush();
    if (partitions) {
      // A client that names the revoked partitions (cooperative): end them now.
      const finals: PartitionCommit[] = [];
      for (const lane of lanes) {
        if (lane.ended) continue;
        const f = this.#frontier.revoke(lane.topic, lane.partition);
        if (f && !this.#tx) finals.push(f); // transactional: the flush above was the final transaction
        this.#dispatcher.removeLane(lane);
      }
      if (this.#tx) void this.#tx.port.release(lanes).catch(() => {});
      if (finals.length > 0) {
        this.#scheduler.addFinal(finals);
        await this.#scheduler.flush();
      }
    }
  }

  #lost(partitions?: readonly TopicPartition[]): void {
    const lanes = partitions
      ? partitions.map((p) => this.#dispatcher.lane(p.topic, p.partition)).filter((l): l is Lane<M> => !!l)
      : [...this.#dispatcher.lanes()];
    for (const lane of lanes) {
      this.#frontier.lose(lane.topic, lane.partition);
      this.#dispatcher.removeLane(lane);
    }
    if (this.#tx && lanes.length > 0) void this.#tx.port.release(lanes).catch(() => {});
  }

  #failed(error: unknown): void {
    if (this.#state === "stopped" || this.#state === "failed") return;
    this.#state = "failed";
    this.#failure = error;
    this.#stopWaiting.abort(error);
    this.#watch.close();
    clearInterval(this.#stallTimer);
    this.#events.emit("error", { kind: "client", error });
    this.#scheduler.halt();
    this.#dispatcher.halt();
    this.#signal?.removeEventListener("abort", this.#onAbort!);
    this.#lost();
    this.#frontier.close();
    if (this.#tx) void this.#tx.port.close().catch(() => {});
    this.#rejectDone(error);
  }

  /** `cluster.maxUnavailableMs` passed: the consumer fails and the client is closed (a shutdown already bounds itself). */
  #giveUp(error: ClusterUnavailableError): void {
    if (this.#state === "stopping" || this.#state === "stopped" || this.#state === "failed") return;
    this.#failed(error);
    void this.#client.close().catch((e: unknown) => this.#events.emit("error", { kind: "client", error: e }));
  }

  #deliver(batch: DeliveredBatch<M>): boolean {
    const lane = this.#dispatcher.lane(batch.topic, batch.partition);
    if (lane === undefined || lane.state !== "active" || lane.paused || lane.held || !this.#live()) {
      if (lane && lane.state === "stopped" && !lane.paused) this.#pauseStopped(lane);
      return false;
    }
    const tracker = lane.tracker;
    let { messages, offsets } = batch;
    const n = offsets.length;
    // Records below the delivered position were registered already (e.g. a re-fetch): skip them.
    const delivered = tracker.delivered;
    if (delivered !== undefined && n > 0 && offsets[0] < delivered) {
      let i = 0;
      while (i < n && offsets[i] < delivered) i++;
      messages = messages.slice(i);
      offsets = Array.prototype.slice.call(offsets, i) as number[];
      if (offsets.length === 0 && batch.next <= delivered) return true;
    }
    let first: number;
    try {
      first = tracker.register(offsets, batch.next);
    } catch (error) {
      if (error instanceof CapacityError) {
        // Too much retained: refuse (the client delivers it again) and pause until it drains.
        this.#dispatcher.setRetained(lane, tracker.retained);
        if (!lane.paused) {
          this.#dispatcher.markPaused(lane);
          this.#client.pause([lane]);
        }
        return false;
      }
      throw error;
    }
    const count = offsets.length;
    if (count > 0) {
      const claim = lane.claim;
      if (claim !== undefined && claim.end > offsets[0]) {
        this.#enqueueUnclaimed(lane, claim, messages, offsets, first);
      } else {
        if (claim !== undefined) lane.claim = undefined; // delivery passed it
        // Exactly-once handlers need their staged context (#start): no direct start.
        const from = this.#tx ? 0 : this.#runDirect(lane, messages, offsets, first, count);
        if (from < count && lane.state === "active") {
          const works = new Array<Work<M>>(count - from);
          const keyOf = this.#keyOf;
          for (let i = from; i < count; i++) {
            const m = messages[i];
            works[i - from] = new Work(lane, m, offsets[i], first + i, keyOf ? keyOf(m) : undefined);
          }
          this.#dispatcher.enqueue(lane, works);
        }
      }
    }
    this.#dispatcher.pump(); // synchronous handlers may finish the whole batch right here
    this.#dispatcher.setRetained(lane, tracker.retained);
    return true;
  }

  /**
   * Queues a registered batch's records except those an earlier owner's claim says are
   * finished: those are completed at once, without running the handler (counted as skipped).
   */
  #enqueueUnclaimed(
    lane: Lane<M>,
    claim: CompletedSet,
    messages: readonly M[],
    offsets: ArrayLike<number>,
    first: number,
  ): void {
    const works: Work<M>[] = [];
    const keyOf = this.#keyOf;
    const tracker = lane.tracker;
    let advanced = false;
    for (let i = 0; i < offsets.length; i++) {
      const o = offsets[i];
      if (claim.isFinished(o)) {
        this.#skipped++;
        if (tracker.complete(first + i) === Completion.Advanced) advanced = true;
      } else {
        const m = messages[i];
        works.push(new Work(lane, m, o, first + i, keyOf ? keyOf(m) : undefined));
      }
    }
    if (works.length > 0) this.#dispatcher.enqueue(lane, works);
    if (advanced) this.#scheduler.notify();
  }

  /**
   * Runs a registered batch's records right here, in offset order, while a record may start
   * without queueing ({@link Dispatcher.canStartDirect}): a handler that returns at once
   * finishes its record before the next one starts (no queue, no key taken, one tracker
   * call for all of them), one that returns a promise or throws leaves its record in flight
   * as {@link #start} would. Completions are applied in one call before anything else can
   * look at the tracker (before a failure is handled, and before returning); no commit can
   * be proposed meanwhile (commits leave from timers and promise callbacks, never from here).
   * @returns the index of the first record not started (the caller queues the rest)
   */
  #runDirect(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    // A delivery from inside a handler called here (a client that delivers synchronously) queues its batch: the scratch is in use.
    if (this.#inDirect) return 0;
    this.#inDirect = true;
    try {
      return this.#runDirectLoop(lane, messages, offsets, first, count);
    } finally {
      this.#inDirect = false;
    }
  }

  #runDirectLoop(lane: Lane<M>, messages: readonly M[], offsets: ArrayLike<number>, first: number, count: number): number {
    const d = this.#dispatcher;
    const handler = this.#handler;
    if (doneScratch.length < count) doneScratch = new Float64Array(Math.max(count, doneScratch.length * 2));
    const done = doneScratch;
    let k = 0; // handles finished and not applied yet: done[0 .. k)
    let i = 0;
    while (i < count && d.canStartDirect(lane)) {
      const m = messages[i];
      const work = new Work<M>(lane, m, offsets[i], first + i, undefined);
      i++;
      d.beginDirect(work);
      let result: unknown;
      try {
        result = handler(m, work);
      } catch (error) {
        k = this.#completeDirect(lane, done, k);
        d.keepDirect(work, this.#keyOf?.(m));
        this.#attemptFailed(work, error);
        continue;
      }
      if (result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function") {
        d.keepDirect(work, this.#keyOf?.(m));
        (result as PromiseLike<unknown>).then(
          () => this.#attemptOk(work),
          (error: unknown) => this.#attemptFailed(work, error),
        );
      } else {
        d.endDirect(work);
        done[k++] = work.handle;
      }
    }
    this.#completeDirect(lane, done, k);
    lane.notifyIdle();
    return i;
  }

  /** Applies `done[0 .. k)`, the handles of directly run records that finished; returns 0 (nothing left to apply). */
  #completeDirect(lane: Lane<M>, done: Float64Array, k: number): number {
    if (k === 0 || lane.abandoned) return 0;
    const n = lane.tracker.completeMany(done.subarray(0, k));
    if (n > 0) {
      this.#completed += n;
      this.#scheduler.notify();
    }
    return 0;
  }

  // ---- records ----

  #start(work: Work<M>): void {
    let result: unknown;
    let context: RecordContext = work;
    if (this.#tx) {
      // This attempt's outputs, kept only if it succeeds.
      const staged: OutputRecord[] = [];
      let open = true;
      const send = (...records: OutputRecord[]): void => {
        if (!open) throw new InvalidArgumentError(`send() after the handler of ${work.topic}/${work.partition}@${work.offset} settled`);
        for (const r of records) staged.push(checkOutput(r));
      };
      const end = (): void => void (open = false);
      context = { topic: work.topic, partition: work.partition, offset: work.offset, attempt: work.attempt, signal: work.signal, send } as TransactionalContext;
      const ok = (): void => (end(), this.#attemptOk(work, staged));
      const failed = (error: unknown): void => (end(), this.#attemptFailed(work, error));
      try {
        result = this.#handler(work.message, context);
      } catch (error) {
        failed(error);
        return;
      }
      if (result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function") {
        (result as PromiseLike<unknown>).then(ok, failed);
      } else ok();
      return;
    }
    try {
      result = this.#handler(work.message, context);
    } catch (error) {
      this.#attemptFailed(work, error);
      return;
    }
    if (result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function") {
      (result as PromiseLike<unknown>).then(
        () => this.#attemptOk(work),
        (error: unknown) => this.#attemptFailed(work, error),
      );
    } else {
      this.#attemptOk(work);
    }
  }

  #attemptOk(work: Work<M>, outputs?: readonly OutputRecord[]): void {
    this.#dispatcher.attemptEnded(work);
    this.#complete(work, outputs);
    this.#dispatcher.pump();
  }

  #complete(work: Work<M>, outputs?: readonly OutputRecord[]): void {
    const lane = work.lane;
    this.#dispatcher.settle(work);
    if (lane.abandoned) return;
    const r = lane.tracker.complete(work.handle);
    // Same tick as the completion: the next proposal and these outputs go together.
    if (outputs !== undefined && (r === Completion.Advanced || r === Completion.Completed)) {
      this.#tx?.stage.completed(lane, work.offset, outputs);
    }
    if (r === Completion.Advanced) {
      this.#completed++;
      this.#scheduler.notify();
      if (this.#dispatcher.wantsRetained(lane) && !lane.ended) {
        this.#dispatcher.setRetained(lane, lane.tracker.retained);
      }
    } else if (r === Completion.Completed) {
      this.#completed++;
      if (this.#completedSets) this.#scheduler.notify(); // the completed set above the safe position grew
    }
  }

  #attemptFailed(work: Work<M>, error: unknown): void {
    this.#failures++;
    work.error = error;
    const lane = work.lane;
    const left = this.#dispatcher.drainLeft(lane); // Infinity while active; a drain retries within its deadline
    if (left <= 0) {
      this.#dispatcher.abandon(work); // stays pending: delivered again after the revoke or restart
    } else if (canRetry(this.#retry, work.attempt)) {
      const delayMs = Math.min(backoffDelay(this.#retry, work.attempt), Math.floor(left / 2));
      this.#retries++;
      if (this.#events.has("retry")) {
        this.#events.emit("retry", {
          topic: lane.topic,
          partition: lane.partition,
          offset: work.offset,
          attempt: work.attempt,
          delayMs,
          error,
        });
      }
      this.#dispatcher.retryLater(work, delayMs);
    } else if (this.#retry.onExhausted === "dead-letter") {
      this.#deadLetter(work, 1);
    } else {
      this.#stopPartition(work, error);
    }
    // Only now: a drain waiting for the lane to go idle must see the retry or dead letter scheduled.
    this.#dispatcher.attemptEnded(work);
    this.#dispatcher.pump();
  }

  #deadLetter(work: Work<M>, produceAttempt: number): void {
    const lane = work.lane;
    const info = {
      topic: lane.topic,
      partition: lane.partition,
      offset: work.offset,
      error: work.error,
      attempts: work.attempt,
    };
    this.#dispatcher.sideStarted(work);
    const txDeadLetter = this.#tx?.port.deadLetter;
    if (txDeadLetter) {
      // Transactional: the dead letter is the record's output, committed with its completion.
      let letter: OutputRecord;
      try {
        letter = txDeadLetter(work.message, info);
      } catch (error) {
        this.#dispatcher.sideEnded(work);
        this.#stopPartition(work, error);
        return;
      }
      void Promise.resolve().then(() => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.#deadLettered++;
        this.#events.emit("deadLetter", info);
        this.#complete(work, [letter]);
        this.#dispatcher.pump();
      });
      return;
    }
    let produced: Promise<void>;
    try {
      produced = Promise.resolve(this.#client.deadLetter!(work.message, { ...info, signal: work.signal }));
    } catch (error) {
      produced = Promise.reject(error);
    }
    produced.then(
      () => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.#deadLettered++;
        this.#events.emit("deadLetter", info);
        this.#complete(work);
        this.#dispatcher.pump();
      },
      (error: unknown) => {
        this.#dispatcher.sideEnded(work);
        if (lane.ended) return;
        this.#events.emit("error", { ...info, kind: "dead-letter", error });
        if (this.#dispatcher.drainLeft(lane) <= 0) {
          this.#dispatcher.abandon(work);
        } else if (canRetry(this.#retry, produceAttempt)) {
          this.#dispatcher.wait(work, backoffDelay(this.#retry, produceAttempt), () => {
            if (this.#dispatcher.drainLeft(lane) <= 0) this.#dispatcher.abandon(work);
            else this.#deadLetter(work, produceAttempt + 1);
          });
        } else {
          this.#stopPartition(work, error);
        }
      },
    );
  }

  #stopPartition(work: Work<M>, error: unknown): void {
    const lane = work.lane;
    this.#dispatcher.abandon(work); // the record stays pending: the frontier stays below it
    this.#dispatcher.stopLane(lane, "stopped");
    this.#pauseStopped(lane);
    this.#events.emit("error", {
      kind: "partition-stopped",
      error: new PartitionStoppedError(lane.topic, lane.partition, work.offset, error),
      topic: lane.topic,
      partition: lane.partition,
      offset: work.offset,
    });
  }

  #pauseStopped(lane: Lane<M>): void {
    this.#dispatcher.markPaused(lane);
    this.#client.pause([lane]);
    this.#events.emit("pause", {
      topic: lane.topic,
      partition: lane.partition,
      reason: "stopped",
      retained: lane.retained,
    });
  }

  // ---- transactions ----

  /**
   * One commit cycle in exactly-once mode: per partition, the ready outputs of the records
   * the commit calls finished, taken in this tick (the proposal was made in it), then one
   * transaction each. Failed partitions are reset; the cycle then rejects.
   */
  async #txCommit(offsets: readonly CommitOffset[]): Promise<void> {
    const tx = this.#tx!;
    const lanes = offsets.map((o) => this.#dispatcher.lane(o.topic, o.partition));
    const txs = offsets.map((o, i) => ({ ...o, outputs: lanes[i] ? tx.stage.take(lanes[i]!, claimEnd(o)) : [] }));
    tx.stage.prune((l) => l.ended);
    tx.m.begun += txs.length;
    const started = performance.now();
    let outcomes;
    try {
      outcomes = await tx.port.commit(txs, tx.timeoutMs);
    } catch (error) {
      outcomes = txs.map(() => ({ ok: false as const, fenced: false, error }));
    }
    const latencyMs = performance.now() - started;
    const reset: Lane<M>[] = [];
    let firstError: unknown;
    outcomes.forEach((r, i) => {
      const t = txs[i];
      if (r.ok) {
        tx.m.committed++;
        tx.m.records += t.outputs.length;
        tx.m.lastSize = t.outputs.length;
        tx.m.lastLatencyMs = latencyMs;
        if (tx.m.maxLatencyMs === undefined || latencyMs > tx.m.maxLatencyMs) tx.m.maxLatencyMs = latencyMs;
      } else {
        if (r.fenced) tx.m.fenced++;
        else tx.m.aborted++;
        firstError ??= r.error;
        const lane = lanes[i];
        if (lane && !lane.ended) reset.push(lane);
      }
      if (this.#events.has("transaction")) {
        this.#events.emit("transaction", {
          topic: t.topic,
          partition: t.partition,
          outcome: r.ok ? "committed" : r.fenced ? "fenced" : "aborted",
          offset: t.offset,
          records: t.outputs.length,
          latencyMs,
          ...(r.ok ? {} : { error: r.error }),
        });
      }
    });
    if (reset.length > 0) this.#txReset(reset);
    if (firstError !== undefined || outcomes.some((r) => !r.ok)) {
      throw new TransactionFailedError(
        `${outcomes.filter((r) => !r.ok).length} of ${txs.length} transactions failed; their partitions run again from the committed offsets` +
          (firstError instanceof Error ? ` (${firstError.message})` : ""),
      );
    }
  }

  /**
   * A failed transaction: its partitions start over like a fresh assignment (tracker and
   * ready outputs discarded, producer replaced, committed offsets read again, fetching
   * sought back). `confirmed` restarts from the broker's committed offset.
   */
  #txReset(lanes: readonly Lane<M>[]): void {
    const tx = this.#tx!;
    const fresh: Lane<M>[] = [];
    const fallbacks = new Map<string, number>();
    for (const lane of lanes) {
      if (lane.ended || this.#dispatcher.lane(lane.topic, lane.partition) !== lane) continue;
      const origin = lane.tracker.origin;
      if (origin !== undefined) fallbacks.set(tpKey(lane.topic, lane.partition), origin);
      this.#frontier.lose(lane.topic, lane.partition);
      this.#dispatcher.removeLane(lane);
      tx.stage.drop(lane);
      const next = this.#dispatcher.addLane(lane.topic, lane.partition, this.#frontier.assign(lane.topic, lane.partition));
      if (!this.#live()) this.#dispatcher.stopLane(next, "draining");
      fresh.push(next);
      tx.m.resets++;
    }
    if (fresh.length > 0) this.#txOpen(fresh, fallbacks);
  }

  /** Holds new lanes until their producers are open (fenced) and their committed offsets read; then claims and release. */
  #txOpen(lanes: readonly Lane<M>[], fallbacks: ReadonlyMap<string, number>): void {
    if (lanes.length === 0) return;
    for (const lane of lanes) lane.held = true;
    this.#client.pause(lanes);
    const parts = lanes.map((l) => {
      const key = tpKey(l.topic, l.partition);
      const fallback = fallbacks.get(key);
      return { topic: l.topic, partition: l.partition, kept: false, ...(fallback !== undefined ? { fallback } : {}) };
    });
    this.#tx!.port.open(parts, lanes[0].controller.signal).then(
      (positions) => this.#claims(lanes, positions),
      (error: unknown) => {
        // Only when the lanes ended (the port retries otherwise): nothing to release.
        if (lanes.some((l) => !l.ended)) this.#events.emit("error", { kind: "committed-read", error });
      },
    );
  }

  /** Holds dispatching while no commit was acknowledged for `stallMs` although records finished; releases after an acknowledgement. */
  #checkStall(): void {
    const stalled = this.#live() && this.#completed + this.#skipped > this.#completedAtAck &&
      (this.#refused || Date.now() - this.#lastAckAt > this.#stallMs);
    this.#setHeld(stalled);
  }

  /** A commit of the current assignment was refused: hold at once (until an acknowledgement) if records finished since the last one. */
  #hold(): void {
    this.#refused = true;
    this.#checkStall();
  }

  #setHeld(stalled: boolean): void {
    const d = this.#dispatcher;
    if (stalled === d.held) return;
    d.held = stalled;
    if (this.#events.has("stall")) {
      this.#events.emit("stall", { stalled, sinceMs: Date.now() - this.#lastAckAt });
    }
    if (!stalled) d.pump();
  }

  #committed(offsets: readonly CommitOffset[], latencyMs: number): void {
    this.#watch.recovered(); // an acknowledgement: the cluster answers
    this.#lastAckAt = Date.now();
    this.#completedAtAck = this.#completed + this.#skipped;
    this.#refused = false;
    if (this.#dispatcher.held) this.#checkStall();
    this.#commits++;
    this.#lastCommitMs = latencyMs;
    if (this.#maxCommitMs === undefined || latencyMs > this.#maxCommitMs) this.#maxCommitMs = latencyMs;
    for (const o of offsets) {
      const lane = this.#dispatcher.lane(o.topic, o.partition);
      if (lane) lane.lastCommitLatencyMs = latencyMs;
    }
    if (this.#events.has("commit")) this.#events.emit("commit", { offsets, latencyMs });
  }
}
