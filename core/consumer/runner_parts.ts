/**
 * The runner's parts, built from its options and wired to each other: the frontier, the
 * dispatcher and its hooks to the client, the commit scheduler and what it does with an
 * acknowledged or failed commit, the cluster watch, the claims, exactly-once, the stuck
 * watch, the batch collector, the record runner, the stall guard, delivery, log ends and
 * rebalances. {@link ParallelConsumer} (runner.ts) builds them once, in its constructor,
 * and keeps the lifecycle (start, shutdown, failure); every option is checked here, before
 * anything is built.
 *
 * @module
 */
import type { CommitOffset, ConsumerClient } from "./port/mod.ts";
import { Claims } from "./commits/mod.ts";
import { BatchCollector, resolveBatchOptions } from "./records/mod.ts";
import { DirectBatches } from "./records/mod.ts";
import type { KeyReader } from "./dispatch/mod.ts";
import { ClusterWatch } from "./port/mod.ts";
import { CommitScheduler } from "./commits/mod.ts";
import { Delivery } from "./records/mod.ts";
import { Dispatcher } from "./dispatch/mod.ts";
import { ExactlyOnce } from "./commits/mod.ts";
import { ConsumerLife } from "./port/mod.ts";
import { type ConsumerEvents, EventHub, type Listener } from "./port/mod.ts";
import { RateGate, resolveRateLimit } from "./records/mod.ts";
import { Rebalance } from "./commits/mod.ts";
import { RecordRunner } from "./records/mod.ts";
import { resolveRetryPolicy } from "./records/mod.ts";
import { checkConsumerOptions, checkHandlerChoice, countOrInfinity, nonNegative, type ParallelConsumerOptions } from "./runner_options.ts";
import { Narrator, resolveLogger } from "./port/mod.ts";
import { CommitTally } from "./snapshot.ts";
import { StallGuard } from "./commits/mod.ts";
import { LogEnds } from "./dispatch/mod.ts";
import { resolveStuckOptions, StuckWatch } from "./records/mod.ts";
import { UserPause } from "./records/mod.ts";
import { resolveTransactionalOptions } from "./port/mod.ts";
import { checkTracing, type TracingSource } from "./port/mod.ts";
import { type ClusterUnavailableError, describe, InvalidArgumentError } from "../errors.ts";
import { Frontier } from "../tracker/frontier.ts";

/** The completed-set budget of the runner unless one is given (characters): the broker's 4,096 less the stored NUL. */
const RUNNER_BUDGET = 4_095;

/** The parts of one {@link ParallelConsumer}, wired to each other and to its client. */
export interface RunnerParts<M> {
  /** One tracker per partition assignment. */
  readonly frontier: Frontier;
  /** Ordering, concurrency, backpressure. */
  readonly dispatcher: Dispatcher<M>;
  /** Coalesced commits of the safe positions. */
  readonly scheduler: CommitScheduler;
  /** The consumer's events and their listeners (`options.on`, the logger's narrator). */
  readonly events: EventHub;
  /** Where the consumer is in its life. */
  readonly life: ConsumerLife;
  /** `shutdownGraceMs`, checked. */
  readonly graceMs: number;
  /** Cluster availability and the give-up bound. */
  readonly watch: ClusterWatch;
  /** The stall guard: stops starting records whose completion cannot be committed. */
  readonly stall: StallGuard;
  /** The partitions' log ends (lag). */
  readonly ends: LogEnds<M>;
  /** The exactly-once hooks, in that mode. */
  readonly tx: ExactlyOnce<M> | undefined;
  /** Handler attempts, retries, dead letters. */
  readonly records: RecordRunner<M>;
  /** Delivered batches into trackers and lanes. */
  readonly delivery: Delivery<M>;
  /** Assignments, orderly revokes, lost partitions. */
  readonly rebalance: Rebalance<M>;
  /** Counters of acknowledged and failed commits. */
  readonly commits: CommitTally;
  /** The user's pauses. */
  readonly userPause: UserPause<M>;
  /** The rate limit, if any. */
  readonly gate: RateGate | undefined;
  /** The stuck-record watch, if any. */
  readonly stuck: StuckWatch<M> | undefined;
  /** What tracing loads at the start, if any. */
  readonly tracing: TracingSource<M> | undefined;
}

/**
 * Checks `options` and builds the parts of a consumer over `client`.
 * @param client the Kafka client binding
 * @param options the consumer's options
 * @param giveUp called when `cluster.maxUnavailableMs` passed
 * @throws {InvalidArgumentError} for bad options
 */
export function buildParts<M>(
  client: ConsumerClient<M>,
  options: ParallelConsumerOptions<M>,
  giveUp: (error: ClusterUnavailableError) => void,
): RunnerParts<M> {
  const batchOptions = options?.batch === undefined ? undefined : resolveBatchOptions(options.batch);
  checkHandlerChoice(options, batchOptions !== undefined);
  checkConsumerOptions(options);
  const tracing = checkTracing(options.tracing);
  const handler = options.handler ?? (() => {}); // batch mode: records go to the collector instead
  const txo = options.transactional;
  if (txo !== undefined && (txo === null || typeof txo.port?.commit !== "function" || typeof txo.port?.open !== "function")) {
    throw new InvalidArgumentError(`transactional.port must be a TransactionalPort; got ${describe(txo?.port)}`);
  }
  const txTimeoutMs = txo === undefined ? 0 : resolveTransactionalOptions(txo).timeoutMs;
  const canDeadLetter = txo ? typeof txo.port.deadLetter === "function" : typeof client.deadLetter === "function";
  const retry = resolveRetryPolicy(options.retry, canDeadLetter);
  const stuckOptions = options.stuck === undefined ? undefined : resolveStuckOptions(options.stuck, canDeadLetter);
  const drainMs = nonNegative("drainTimeoutMs", options.drainTimeoutMs, 5_000);
  const graceMs = nonNegative("shutdownGraceMs", options.shutdownGraceMs, 10_000);
  const completedSet = options.commit?.completedSet;
  if (options.commit?.metadata !== undefined && completedSet !== false) {
    throw new InvalidArgumentError(
      "commit.metadata replaces the completed set in the commit metadata: pass commit.completedSet: false with it",
    );
  }
  const frontier = new Frontier({
    ...(options.engine !== undefined ? { engine: options.engine } : {}),
    ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
    // One byte of the broker's 4,096 goes to the NUL every binding stores after the metadata
    // (adapters/shared/stored_metadata.ts: Confluent's client appends it and drops the last byte it reads).
    completedSet: completedSet === false ? false : { budget: completedSet?.budget ?? RUNNER_BUDGET },
  });
  const completedSets = completedSet !== false;
  const mode = options.commit?.mode ?? "eager";
  const stallMs = nonNegative("commit.stallMs", options.commit?.stallMs, mode === "interval" ? 3 * (options.commit?.intervalMs ?? 1_000) : 1_000);
  const maxUncommittedOption = countOrInfinity("commit.maxUncommitted", options.commit?.maxUncommitted);
  const events = new EventHub();
  const life = new ConsumerLife();
  const commits = new CommitTally();
  const gate = options.rateLimit === undefined
    ? undefined
    : new RateGate(resolveRateLimit(options.rateLimit), () => dispatcher.pump());
  const dispatcher = new Dispatcher<M>(options, {
    start: (w) => records.start(w),
    pause: (lane, reason) => {
      client.pause([lane]);
      if (events.has("pause")) {
        events.emit("pause", { topic: lane.topic, partition: lane.partition, reason, retained: lane.retained });
      }
    },
    resume: (lane) => {
      if (!life.live || lane.held || lane.userPaused) return; // a held lane resumes once its claim is read; a user-paused one at resume()
      client.resume([lane]);
      if (events.has("resume")) {
        events.emit("resume", {
          topic: lane.topic,
          partition: lane.partition,
          pausedMs: Date.now() - lane.pausedAt,
          retained: lane.retained,
        });
      }
    },
    recordSignal: (signal) => client.recordSignal?.(signal),
    added: (lane) => {
      userPause.added(lane);
      stuck?.added(lane);
    },
    ...(gate ? { gate } : {}),
    ...(typeof client.keyOf === "function" ? { keys: client as KeyReader<M> } : {}),
  });
  const userPause = new UserPause<M>({ dispatcher, client, events, life });
  const scheduler = new CommitScheduler(frontier, {
    send: (offsets) => {
      const seq = stall.seq;
      return (tx ? tx.commit(offsets) : client.commit(offsets)).catch((error: unknown) => {
        // Refused (not timed out) within the current assignment: commits cannot land now.
        stall.refused(seq);
        throw error;
      });
    },
    include: (topic, partition) => dispatcher.lane(topic, partition) !== undefined,
    committed: (offsets, latencyMs) => committed(offsets, latencyMs),
    failed: (offsets, error) => {
      commits.failures++;
      events.emit("error", { kind: "commit", error, ...(offsets.length === 1 ? offsets[0] : {}) });
    },
  }, txo ? { ...options.commit, timeoutMs: txTimeoutMs + 1_000 } : options.commit); // the port bounds each transaction
  const logger = resolveLogger(options.logger);
  const narrator = logger && new Narrator(logger, options.cluster?.maxUnavailableMs ?? Infinity);
  if (narrator) events.observe((event, payload, heard) => narrator.saw(event, payload, heard));
  for (const [event, listener] of Object.entries(options.on ?? {})) {
    if (listener) events.on(event as keyof ConsumerEvents, listener as Listener<unknown>);
  }
  const watch = new ClusterWatch(options.cluster, {
    unavailable: (e) => events.emit("unavailable", e),
    available: (e) => events.emit("available", e),
    giveUp,
  });
  const claims = new Claims<M>({ frontier, client, events, life, transactional: txo !== undefined });
  const tx = txo === undefined
    ? undefined
    : new ExactlyOnce<M>(txo.port, txTimeoutMs, { dispatcher, frontier, events, life, claims });
  const stuck = stuckOptions === undefined ? undefined : new StuckWatch<M>(stuckOptions, {
    dispatcher,
    events,
    giveUp: (work, error, action) => records.giveUp(work, error, action),
  });
  const batch = batchOptions === undefined ? undefined : new BatchCollector<M>(batchOptions, {
    ok: (work, outputs) => records.attemptOk(work, outputs),
    failed: (work, error) => records.attemptFailed(work, error),
    full: () => dispatcher.running >= dispatcher.options.concurrency,
    together: (settle) => dispatcher.together(settle),
    transactional: tx !== undefined,
  });
  const records = new RecordRunner<M>({ handler, dispatcher, scheduler, client, events, retry, completedSets, tx, stuck, batch });
  const stall = new StallGuard(stallMs, {
    dispatcher,
    events,
    life,
    finished: () => records.completed + records.skipped,
    ran: () => records.completed,
  }, maxUncommittedOption ?? (mode === "interval" ? Infinity : 10 * dispatcher.options.concurrency), mode === "interval" ? options.commit?.intervalMs ?? 1_000 : 0);
  const delivery = new Delivery<M>({
    handler,
    dispatcher,
    scheduler,
    client,
    records,
    life,
    direct: tx === undefined && stuck === undefined && batch === undefined, // each needs a full context per record
    ...(batch !== undefined && tx === undefined && stuck === undefined
      ? { directBatches: new DirectBatches<M>({ collector: batch, dispatcher, records, scheduler, keys: dispatcher.keyed ? client as KeyReader<M> : undefined }) }
      : {}),
  });
  const ends = new LogEnds<M>({ dispatcher, client, life, intervalMs: options.commit?.intervalMs ?? 1_000 });
  const rebalance = new Rebalance<M>({ dispatcher, frontier, scheduler, claims, stall, life, tx, completedSets, drainMs });

  /** A commit was acknowledged: the cluster answers, a stall ends, the counters and `commit` event. */
  function committed(offsets: readonly CommitOffset[], latencyMs: number): void {
    watch.recovered(); // an acknowledgement: the cluster answers
    narrator?.committed();
    stall.acknowledged(latencyMs);
    commits.acknowledged(latencyMs);
    for (const o of offsets) {
      const lane = dispatcher.lane(o.topic, o.partition);
      if (lane) lane.lastCommitLatencyMs = latencyMs;
    }
    if (events.has("commit")) events.emit("commit", { offsets, latencyMs });
  }

  return { frontier, dispatcher, scheduler, events, life, graceMs, watch, stall, ends, tx, records, delivery, rebalance, commits, userPause, gate, stuck, tracing };
}
