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
import { CapacityError, InvalidArgumentError, OffsetFrontierError, describe } from "../errors.ts";
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
  /** Aborted when the work is abandoned: the partition was revoked or lost, or the shutdown grace expired. */
  readonly signal: AbortSignal;
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
  /** Aborting it shuts the consumer down gracefully. */
  signal?: AbortSignal;
  /** Tracker engine (default `"auto"`). */
  engine?: EngineChoice;
  /** Tracker capacity per partition (default 2^24 entries). */
  capacity?: number;
  /** Event listeners. */
  on?: ConsumerListeners;
}

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
  #stallTimer: ReturnType<typeof setInterval> | undefined;
  #lastAckAt = 0; // Date.now() of the last acknowledged commit (or the start)
  #completedAtAck = 0; // #completed + #skipped then
  #assignSeq = 0; // counts assignments: a failure of an earlier one's commit holds nothing
  #refused = false; // a commit was refused since the last acknowledgement
  #state: ConsumerState = "created";
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
    this.#retry = resolveRetryPolicy(options.retry, typeof client.deadLetter === "function");
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
        return this.#client.commit(offsets).catch((error: unknown) => {
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
    }, options.commit);
    for (const [event, listener] of Object.entries(options.on ?? {})) {
      if (listener) this.#events.on(event as keyof ConsumerEvents, listener as Listener<unknown>);
    }
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
   * Connects the client and starts consuming. Resolves once consuming has begun.
   * @throws whatever the client's start threw (the consumer is then `failed`)
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
    };
    this.#scheduler.start();
    this.#lastAckAt = Date.now();
    if (this.#stallMs !== Infinity) {
      this.#stallTimer = setInterval(() => this.#checkStall(), Math.max(50, Math.min(1_000, this.#stallMs / 4)));
      (this.#stallTimer as { unref?: () => void }).unref?.();
    }
    try {
      await this.#client.start(sink);
    } catch (error) {
      this.#failed(error);
      throw error;
    }
    if (this.#state === "starting") this.#state = "running";
    if (this.#signal) {
      this.#onAbort = () => void this.shutdown();
      if (this.#signal.aborted) void this.shutdown();
      else this.#signal.addEventListener("abort", this.#onAbort, { once: true });
    }
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
    await this.#scheduler.flush();
    const finals: CommitOffset[] = [];
    for (const lane of [...this.#dispatcher.lanes()]) {
      const f = this.#frontier.revoke(lane.topic, lane.partition);
      if (f) finals.push(f);
      this.#dispatcher.removeLane(lane);
    }
    if (finals.length > 0) {
      // Completions that landed after the flush (none unless a handler ignored the grace).
      try {
        await this.#client.commit(finals);
      } catch (error) {
        this.#commitFailures++;
        this.#events.emit("error", { kind: "commit", error });
      }
    }
    clearInterval(this.#stallTimer);
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
    };
  }

  #live(): boolean {
    return this.#state === "running" || this.#state === "starting";
  }

  // ---- client events ----

  #assigned(partitions: readonly TopicPartition[], committed?: Promise<readonly CommittedPosition[]>, incremental = false): void {
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
    for (const lane of incremental ? [] : [...this.#dispatcher.lanes()]) {
      // Still ours after an orderly revoke: its final commit is legitimate. Anything else: lost.
      if (this.#orderly && keep.has(tpKey(lane.topic, lane.partition))) {
        const f = this.#frontier.revoke(lane.topic, lane.partition);
        if (f) finals.push(f);
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
    if (committed !== undefined && this.#completedSets && lanes.length > 0) {
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
      const mine = this.#frontier.recall(lane.topic, lane.partition, offset);
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
    await early;
    await this.#scheduler.flush();
    if (partitions) {
      // A client that names the revoked partitions (cooperative): end them now.
      const finals: PartitionCommit[] = [];
      for (const lane of lanes) {
        if (lane.ended) continue;
        const f = this.#frontier.revoke(lane.topic, lane.partition);
        if (f) finals.push(f);
        this.#dispatcher.removeLane(lane);
      }
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
  }

  #failed(error: unknown): void {
    if (this.#state === "stopped" || this.#state === "failed") return;
    this.#state = "failed";
    clearInterval(this.#stallTimer);
    this.#events.emit("error", { kind: "client", error });
    this.#scheduler.halt();
    this.#dispatcher.halt();
    this.#signal?.removeEventListener("abort", this.#onAbort!);
    this.#lost();
    this.#frontier.close();
    this.#rejectDone(error);
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
        this.#dispatcher.setRetained(lane, tracker.stats().retained);
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
        const works = new Array<Work<M>>(count);
        const keyOf = this.#keyOf;
        for (let i = 0; i < count; i++) {
          const m = messages[i];
          works[i] = new Work(lane, m, offsets[i], first + i, keyOf ? keyOf(m) : undefined);
        }
        this.#dispatcher.enqueue(lane, works);
      }
    }
    this.#dispatcher.pump(); // synchronous handlers may finish the whole batch right here
    this.#dispatcher.setRetained(lane, tracker.stats().retained);
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

  // ---- records ----

  #start(work: Work<M>): void {
    let result: unknown;
    try {
      result = this.#handler(work.message, work);
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

  #attemptOk(work: Work<M>): void {
    this.#dispatcher.attemptEnded(work);
    this.#complete(work);
    this.#dispatcher.pump();
  }

  #complete(work: Work<M>): void {
    const lane = work.lane;
    this.#dispatcher.settle(work);
    if (lane.abandoned) return;
    const r = lane.tracker.complete(work.handle);
    if (r === Completion.Advanced) {
      this.#completed++;
      this.#scheduler.notify();
      if (this.#dispatcher.wantsRetained(lane) && !lane.ended) {
        this.#dispatcher.setRetained(lane, lane.tracker.stats().retained);
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
    let produced: Promise<void>;
    try {
      produced = Promise.resolve(this.#client.deadLetter!(work.message, info));
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
