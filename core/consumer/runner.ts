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
 * The parts live beside it, one concept each: delivery and the direct start
 * (delivery.ts), handler attempts, retries and dead letters (record_runner.ts), rebalances
 * and the revoke drain (rebalance.ts), the handover of claims (claims.ts), the stall guard
 * (stall.ts), the exactly-once hooks (exactly_once.ts). runner_parts.ts checks the options and
 * builds and wires them; this file keeps the lifecycle (start, shutdown, failure) and the
 * metrics snapshot.
 *
 * @module
 */
import type { ClientSink, ConsumerClient, TopicPartition } from "./port/mod.ts";
import type { ClusterWatch } from "./port/mod.ts";
import type { CommitScheduler } from "./commits/mod.ts";
import type { Delivery } from "./records/mod.ts";
import type { Dispatcher } from "./dispatch/mod.ts";
import type { ExactlyOnce } from "./commits/mod.ts";
import type { ConsumerLife, ConsumerState } from "./port/mod.ts";
import type { ConsumerEvents, ConsumerMetrics, EventHub, Listener } from "./port/mod.ts";
import type { RateGate } from "./records/mod.ts";
import type { Rebalance } from "./commits/mod.ts";
import type { RecordRunner } from "./records/mod.ts";
import { withProbe } from "./port/mod.ts";
import type { ParallelConsumerOptions } from "./runner_options.ts";
import { drainAndClose } from "./commits/mod.ts";
import { type CommitTally, snapshot } from "./snapshot.ts";
import type { StallGuard } from "./commits/mod.ts";
import type { LogEnds } from "./dispatch/mod.ts";
import type { StuckWatch } from "./records/mod.ts";
import type { UserPause } from "./records/mod.ts";
import { loadTracing, type TracingSource } from "./port/mod.ts";
import { buildParts } from "./runner_parts.ts";
import { type ClusterUnavailableError, InvalidArgumentError } from "../errors.ts";
import type { Frontier } from "../tracker/frontier.ts";

export type { ConsumerState } from "./port/mod.ts";
export { PartitionStoppedError } from "./records/mod.ts";
export type { Handler, ParallelConsumerOptions, RecordContext, TransactionalContext } from "./runner_options.ts";

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
  readonly #frontier: Frontier;
  readonly #dispatcher: Dispatcher<M>;
  readonly #scheduler: CommitScheduler;
  readonly #events: EventHub;
  readonly #life: ConsumerLife;
  readonly #graceMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #watch: ClusterWatch;
  readonly #stall: StallGuard;
  readonly #ends: LogEnds<M>;
  readonly #tx: ExactlyOnce<M> | undefined;
  readonly #records: RecordRunner<M>;
  readonly #delivery: Delivery<M>;
  readonly #rebalance: Rebalance<M>;
  readonly #stopWaiting = new AbortController(); // the sink's signal: shutdown began or the consumer gave up
  #failure: unknown; // why the consumer failed, once `failed`
  #shutdown: Promise<void> | undefined;
  #resolveDone!: () => void;
  #rejectDone!: (error: unknown) => void;
  #onAbort: (() => void) | undefined;
  readonly #commits: CommitTally;
  readonly #userPause: UserPause<M>;
  readonly #gate: RateGate | undefined;
  readonly #stuck: StuckWatch<M> | undefined;
  readonly #tracing: TracingSource<M> | undefined;

  /**
   * A consumer over `client`, not started yet.
   * @param client the Kafka client binding
   * @param options handler, ordering, bounds, retry, commit and shutdown options
   * @throws {InvalidArgumentError} for bad options
   */
  constructor(client: ConsumerClient<M>, options: ParallelConsumerOptions<M>) {
    const parts = buildParts(client, options, (error) => this.#giveUp(error));
    this.#client = client;
    this.#frontier = parts.frontier;
    this.#dispatcher = parts.dispatcher;
    this.#scheduler = parts.scheduler;
    this.#events = parts.events;
    this.#life = parts.life;
    this.#graceMs = parts.graceMs;
    this.#watch = parts.watch;
    this.#stall = parts.stall;
    this.#ends = parts.ends;
    this.#tx = parts.tx;
    this.#records = parts.records;
    this.#delivery = parts.delivery;
    this.#rebalance = parts.rebalance;
    this.#commits = parts.commits;
    this.#userPause = parts.userPause;
    this.#gate = parts.gate;
    this.#stuck = parts.stuck;
    this.#tracing = parts.tracing;
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
    return this.#life.state;
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
    const life = this.#life;
    if (life.state !== "created") throw new InvalidArgumentError(`start() was already called (state ${life.state})`);
    life.state = "starting";
    if (this.#signal?.aborted) {
      life.state = "stopped";
      this.#resolveDone();
      return;
    }
    // Loaded before anything is delivered: every attempt then runs in a span of its own, queued (no direct start).
    const tracing = this.#tracing && await loadTracing(this.#tracing).catch((e: unknown) => (this.#failed(e), Promise.reject(e)));
    if (tracing) (this.#records.useTracing(tracing), this.#delivery.queueAll());
    const rebalance = this.#rebalance;
    const delivery = this.#delivery;
    const sink: ClientSink<M> = {
      assigned: (partitions, committed, incremental) => {
        rebalance.assigned(partitions, committed, incremental === true);
        if (committed) this.#ends.committedRead(partitions, committed);
      },
      revoking: (partitions, options) => rebalance.revoking(partitions, options?.awaited !== false),
      lost: (partitions) => rebalance.lost(partitions),
      deliver: (batch) => (batch.endOffset === undefined || this.#ends.seen(batch.topic, batch.partition, batch.endOffset), delivery.deliver(batch)),
      endOffsets: (ends) => this.#ends.seenAll(ends),
      failed: (error) => this.#failed(error),
      unavailable: (error, brokers) => {
        this.#stall.unreachable(); // what finishes during an outage cannot be committed: start no more of it
        return this.#watch.failed(error, brokers);
      },
      available: () => {
        this.#stall.reachable();
        this.#watch.recovered();
      },
      owned: (sentAt) => this.#tx?.owned(sentAt),
      signal: this.#stopWaiting.signal,
    };
    this.#scheduler.start();
    this.#watch.connecting();
    this.#stall.start();
    this.#ends.start();
    this.#stuck?.start();
    if (this.#signal) {
      // Listened to from here on: an abort while the start waits for the cluster ends it.
      this.#onAbort = () => void this.shutdown();
      this.#signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    try {
      await this.#client.start(sink);
    } catch (error) {
      if ((life.state as ConsumerState) === "failed") throw this.#failure; // e.g. gave up waiting for the cluster
      if (this.#shutdown) return void (await this.#shutdown); // stopped while starting
      this.#failed(error);
      throw error;
    }
    if ((life.state as ConsumerState) === "failed") throw this.#failure;
    if (this.#shutdown) return void (await this.#shutdown);
    if (life.state === "starting") life.state = "running";
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
    const life = this.#life;
    if (life.state === "stopped" || life.state === "failed") return;
    life.state = "stopping";
    this.#ends.stop();
    this.#stopWaiting.abort(new Error("the consumer is shutting down"));
    this.#signal?.removeEventListener("abort", this.#onAbort!);
    await drainAndClose({
      client: this.#client,
      events: this.#events,
      dispatcher: this.#dispatcher,
      scheduler: this.#scheduler,
      watch: this.#watch,
      frontier: this.#frontier,
      tx: this.#tx,
      stall: this.#stall,
      commitFailed: () => void this.#commits.failures++,
    }, graceMs);
    this.#stuck?.stop();
    if (life.state === "stopping") life.state = "stopped";
    this.#resolveDone();
  }

  /**
   * Pauses the whole consumer (no argument; partitions assigned later too), or the named
   * partitions (across rebalances, until resumed): no new record starts, running ones
   * finish, fetching stops, the group membership stays. Backpressure never lifts it.
   * `metrics()` shows it (`pausedByUser`). A shutdown while paused waits only for the
   * records running.
   * @throws {InvalidArgumentError} for partitions that are not `{ topic, partition }`
   * @example
   * ```ts
   * consumer.pause();                                     // a downstream outage
   * consumer.pause([{ topic: "orders", partition: 3 }]);  // one partition
   * consumer.resume();                                    // every pause lifted
   * ```
   */
  pause(partitions?: readonly TopicPartition[]): void {
    this.#userPause.pause(partitions);
  }

  /**
   * Lifts every user pause (no argument), or those of the named partitions (which stay
   * paused while the whole consumer is). Fetching resumes unless backpressure holds it.
   * @throws {InvalidArgumentError} for partitions that are not `{ topic, partition }`
   */
  resume(partitions?: readonly TopicPartition[]): void {
    this.#userPause.resume(partitions);
  }

  /** A snapshot per partition and totals. */
  metrics(): ConsumerMetrics {
    return snapshot({
      pausedByUser: this.#userPause.all,
      gate: this.#gate,
      stuck: this.#stuck,
      dispatcher: this.#dispatcher,
      frontier: this.#frontier,
      records: this.#records,
      commits: this.#commits,
      tx: this.#tx,
      watch: this.#watch,
      ends: this.#ends,
    });
  }

  #failed(error: unknown): void {
    const life = this.#life;
    if (life.state === "stopped" || life.state === "failed") return;
    life.state = "failed";
    this.#failure = error;
    this.#stopWaiting.abort(error);
    this.#watch.close();
    this.#stall.stop();
    this.#ends.stop();
    this.#stuck?.stop();
    this.#events.emit("error", { kind: "client", error });
    this.#scheduler.halt();
    this.#dispatcher.halt();
    this.#signal?.removeEventListener("abort", this.#onAbort!);
    this.#rebalance.lost();
    this.#frontier.close();
    if (this.#tx) void this.#tx.port.close().catch(() => {});
    this.#rejectDone(error);
  }

  /** `cluster.maxUnavailableMs` passed: the consumer fails and the client is closed (a shutdown already bounds itself). */
  #giveUp(error: ClusterUnavailableError): void {
    if (this.#ended()) return;
    if (error.attempts > 0 || this.#client.probe === undefined) return this.#gaveUp(error);
    void withProbe(error, this.#client.probe.bind(this.#client)).then((named) => this.#ended() || this.#gaveUp(named));
  }

  #ended(): boolean {
    const state = this.#life.state;
    return state === "stopping" || state === "stopped" || state === "failed";
  }

  #gaveUp(error: ClusterUnavailableError): void {
    this.#failed(error);
    void this.#client.close().catch((e: unknown) => this.#events.emit("error", { kind: "client", error: e }));
  }
}
