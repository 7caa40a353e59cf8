/**
 * The KafkaJS (2.2.x) binding of the parallel consumer, shared by the Node, Bun and
 * Deno entry points.
 *
 * How it drives KafkaJS:
 * - `consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch })`;
 *   `eachBatch` registers the whole batch (`next = batch.lastOffset() + 1`: control
 *   records and aborted messages are not in `batch.messages`), resolves
 *   `batch.lastOffset()` only to move the fetch cursor, and returns at once: records
 *   run on the runner's worker pool, and backpressure is `pause`/`resume` (a slow
 *   `eachBatch` would block every partition of the same broker fetch). KafkaJS
 *   heartbeats after every batch and every empty fetch.
 * - Commits go only through `consumer.commitOffsets`, only for partitions of the
 *   current assignment (the broker accepts commits from a member for partitions it no
 *   longer owns: kafkajs #1046), and count as acknowledged only when KafkaJS reports
 *   the `COMMIT_OFFSETS` event for them (KafkaJS resolves `commitOffsets` without
 *   sending anything once the consumer stopped).
 * - `GROUP_JOIN` (its `memberAssignment`) starts a new assignment with fresh trackers
 *   and clears stale pauses (KafkaJS keeps pauses across rebalances), after reading the
 *   partitions' committed offsets and metadata with the admin client (option `kafka`);
 *   a rebalance begins an orderly revoke (stop dispatching, drain within a bound,
 *   commit). Found by the heartbeat inside `eachBatch`, the revoke is awaited there, so
 *   KafkaJS rejoins only after the drain's commit; found by KafkaJS itself
 *   (`REBALANCING`), it rejoins at once and the drain's commit is best-effort. A join
 *   without a revoke (session expired) or a `CRASH` loses the partitions: never
 *   committed again.
 * - Outages: while the cluster does not answer (connect, subscribe, join, coordinator
 *   lookup) the start keeps trying with the runner's capped backoff, reporting each
 *   failed attempt (`ClientSink.unavailable`). Every `CRASH` that is not a refusal is
 *   restarted here after that backoff (`consumer.run` again; the next `GROUP_JOIN` brings
 *   fresh trackers and reads the committed offsets back): one KafkaJS does not restart
 *   (`restart: false`, e.g. "Failed to find group coordinator"), and one it would restart
 *   only after its own retry time (up to 30 s after a long outage; `stop()` cancels that).
 *   Refusals (authentication, authorization, an unknown topic when subscribing) fail at
 *   once with a `ClusterRefusedError`. A dead letter waits for the cluster the same way.
 *   The sink's signal (shutdown, give-up) ends every wait; during an outage (or a start
 *   that never reached the cluster) `close()` waits at most 3 s for KafkaJS to disconnect
 *   (the rest goes on in the background).
 *
 * @module
 */
import type { Admin } from "kafkajs";
import type { Consumer, Kafka, KafkaMessage } from "./kafkajs_types.ts";
import { unlimitedSignalListeners } from "./signal_listeners.ts";
import { KafkaJSCommits } from "./kafkajs_commits.ts";
import { type DeadLetterOptions, KafkaJSDeadLetters, transactionalDeadLetter } from "./kafkajs_dead_letter.ts";
import { sleepUnlessAborted, unlessAborted } from "./kafkajs_waits.ts";
import { readCommitted } from "./kafkajs_committed.ts";
import type {
  ClientSink,
  CommitOffset,
  CommittedPosition,
  ConsumerClient,
  DeadLetterInfo,
  TopicPartition,
} from "../core/consumer/client.ts";
import { batchOffsets } from "./batch_offsets.ts";
import { groupByTopic, tpKey } from "./topic_partitions.ts";
import { InvalidArgumentError, describe } from "../core/errors.ts";
import { brokersOf, isKafkaJSError, refusalOf } from "./kafkajs_errors.ts";
import { type Handler, ParallelConsumer, type ParallelConsumerOptions } from "../core/consumer/runner.ts";
import { type KafkaJSTransactionalOptions, KafkaJSTransactions } from "./kafkajs_transactions.ts";

/** Options of a KafkaJS parallel consumer. */
export interface KafkaJSConsumerOptions extends Omit<ParallelConsumerOptions<KafkaMessage>, "handler" | "transactional"> {
  /**
   * A KafkaJS consumer from `kafka.consumer({ groupId, … })`, not connected yet. A
   * `maxWaitTimeInMs` of a few hundred ms makes resumes take effect sooner (KafkaJS
   * sleeps that long when every partition is paused).
   */
  consumer: Consumer;
  /**
   * The KafkaJS client that made `consumer`. With it, each new assignment first reads the
   * partitions' committed offsets and metadata (its admin client's `fetchOffsets`), so
   * records an earlier owner finished above the committed offset are skipped instead of
   * redone. Without it the completed sets are still written, but not read back.
   */
  kafka?: Kafka;
  /** Topics (names or patterns) to subscribe to. */
  topics: ReadonlyArray<string | RegExp>;
  /** Start from the earliest offset when the group has no committed offset. Default `false`. */
  fromBeginning?: boolean;
  /** Runs once per record (again on retries): the KafkaJS message and its topic, partition, offset, attempt and signal. */
  handler: Handler<KafkaMessage>;
  /**
   * Dead-letter producer; with it, records whose retries are used up are dead-lettered
   * (see `retry.onExhausted`). With `transactional` the dead letter goes in the record's
   * transaction instead and `producer` is not used.
   */
  deadLetter?: DeadLetterOptions;
  /**
   * Exactly-once consume → process → produce (needs `kafka`): the handler's context gains
   * `send(...)`; its records and the record's completion commit in one transaction (one
   * transactional producer per assigned partition, id `<prefix>-<topic>-<partition>`).
   * Read the outputs with `read_committed` (KafkaJS's default).
   */
  transactional?: KafkaJSTransactionalOptions;
}

/** How long `close()` waits for KafkaJS to leave and disconnect before it returns (the rest goes on in the background). */
const CLOSE_BOUND_MS = 3_000;

/**
 * The {@link ConsumerClient} over one KafkaJS consumer. Most users call
 * {@link createKafkaJSConsumer} (or an adapter's `consume`) instead.
 */
export class KafkaJSClient implements ConsumerClient<KafkaMessage> {
  readonly #consumer: Consumer;
  readonly #topics: ReadonlyArray<string | RegExp>;
  readonly #fromBeginning: boolean;
  readonly #deadLetters: KafkaJSDeadLetters | undefined;
  readonly #kafka: Kafka | undefined;
  #admin: Admin | undefined;
  #sink: ClientSink<KafkaMessage> | undefined;
  #assignment = new Set<string>();
  #assignedTopics: string[] = [];
  #stopped = false;
  #closed = false;
  #running = false;
  #revoking: Promise<void> | undefined; // the orderly revoke of the current rebalance
  readonly #commits: KafkaJSCommits;
  #removers: Array<() => void> = [];
  #attempt: Promise<void> | undefined; // a connect-and-subscribe attempt in progress
  #runConfig: Parameters<Consumer["run"]>[0] | undefined;
  #joined: { promise: Promise<void>; resolve(): void; reject(e: unknown): void } | undefined; // the first GROUP_JOIN
  #restartTimer: ReturnType<typeof setTimeout> | undefined;
  #lastBroker: string | undefined; // the broker of the last request KafkaJS sent
  #unreachable = false; // the last attempt to reach the cluster failed (nothing answered since)
  #everJoined = false; // a GROUP_JOIN came: the start reached the cluster
  #subscribing = false; // the attempt reached subscribe: an unknown topic there means "no such topic"
  /** Produces a dead letter; present only when a dead-letter producer was given. */
  readonly deadLetter?: (message: KafkaMessage, info: DeadLetterInfo) => Promise<void>;

  /**
   * A binding over one KafkaJS consumer (not connected yet).
   * @param consumer a KafkaJS consumer, not connected
   * @param topics topics to subscribe to
   * @param options `fromBeginning` and the dead-letter producer
   */
  constructor(
    consumer: Consumer,
    topics: ReadonlyArray<string | RegExp>,
    options: { fromBeginning?: boolean; deadLetter?: DeadLetterOptions; kafka?: Kafka } = {},
  ) {
    if (!consumer || typeof consumer.run !== "function" || typeof consumer.commitOffsets !== "function") {
      throw new InvalidArgumentError(`consumer must be a KafkaJS consumer; got ${describe(consumer)}`);
    }
    if (!Array.isArray(topics) || topics.length === 0) {
      throw new InvalidArgumentError(`topics must be a non-empty array of names or RegExps; got ${describe(topics)}`);
    }
    for (const t of topics) {
      if (typeof t !== "string" && !(t instanceof RegExp)) {
        throw new InvalidArgumentError(`topics must hold topic names (strings) or RegExps; got ${describe(t)}`);
      }
      if (t === "") throw new InvalidArgumentError(`topics must not hold an empty name`);
    }
    if (options.kafka !== undefined && typeof (options.kafka as { admin?: unknown }).admin !== "function") {
      throw new InvalidArgumentError(`kafka must be the KafkaJS client (new Kafka(…)); got ${describe(options.kafka)}`);
    }
    this.#consumer = consumer;
    this.#kafka = options.kafka;
    this.#topics = topics;
    this.#fromBeginning = options.fromBeginning ?? false;
    this.#commits = new KafkaJSCommits({
      consumer,
      running: () => !this.#closed && this.#running,
      assigned: (topic, partition) => this.#assignment.has(tpKey(topic, partition)),
      unreachable: (error) => void this.#unavailable(error),
    });
    const dlq = options.deadLetter;
    if (dlq) {
      if (!dlq.producer || typeof dlq.producer.send !== "function") {
        throw new InvalidArgumentError(`deadLetter.producer must be a KafkaJS producer; got ${describe(dlq.producer)}`);
      }
      const deadLetters = this.#deadLetters = new KafkaJSDeadLetters(dlq, {
        sink: () => this.#sink,
        closed: () => this.#closed,
        available: () => this.#available(),
        unavailable: (error) => this.#unavailable(error),
      });
      this.deadLetter = (message, info) => deadLetters.produce(message, info);
    }
  }

  /** Partitions of the current assignment. */
  assignment(): TopicPartition[] {
    return [...this.#assignment].map((k) => {
      const i = k.lastIndexOf("\u0000");
      return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
    });
  }

  async start(sink: ClientSink<KafkaMessage>): Promise<void> {
    this.#sink = sink;
    const c = this.#consumer;
    const signal = sink.signal;
    this.#removers.push(
      c.on(c.events.GROUP_JOIN, (e) => this.#onJoin(e.payload.memberAssignment, e.payload.groupId)),
      c.on(c.events.REBALANCING, () => this.#onRebalancing()),
      c.on(c.events.COMMIT_OFFSETS, (e) => this.#onCommitted(e.payload.topics)),
      c.on(c.events.CRASH, (e) => this.#onCrash(e.payload.error, e.payload.restart)),
      c.on(c.events.REQUEST, (e) => void (this.#lastBroker = e.payload.broker)),
    );
    let resolveJoined!: () => void, rejectJoined!: (e: unknown) => void;
    const joined = new Promise<void>((resolve, reject) => ((resolveJoined = resolve), (rejectJoined = reject)));
    this.#joined = { promise: joined, resolve: resolveJoined, reject: rejectJoined };
    // Connect and subscribe, waiting out an unreachable cluster; refusals fail at once.
    for (;;) {
      if (signal.aborted || this.#closed) return;
      this.#subscribing = false;
      const attempt = this.#connect();
      this.#attempt = attempt.then(() => {}, () => {});
      try {
        if ((await unlessAborted(attempt, signal)) === undefined) return; // close() cleans up after it
        break;
      } catch (error) {
        if (signal.aborted || this.#closed) return;
        const refused = refusalOf(error, this.#topicNames(), this.#lastBroker, this.#subscribing);
        if (refused !== undefined || !isKafkaJSError(error)) {
          // A failed start leaves nothing connected (an open producer keeps a process alive).
          await this.#disconnectAll();
          throw refused ?? error;
        }
        if (!(await sleepUnlessAborted(this.#unavailable(error), signal))) return;
      }
    }
    this.#running = true;
    this.#runConfig = {
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        const messages = batch.messages;
        const offsets = batchOffsets(messages);
        const last = batch.lastOffset();
        const taken = sink.deliver({
          topic: batch.topic,
          partition: batch.partition,
          messages,
          offsets,
          next: Number(last) + 1,
        });
        // Moves only the fetch cursor (autoCommit is off). Not taken: fetched again later.
        if (taken) resolveOffset(last);
        // KafkaJS heartbeats only once its interval passed, so this is usually a no-op. When it
        // finds the group rebalancing, KafkaJS rejoins only after eachBatch settles: the revoke
        // is awaited here (drain within the bound, commit in the old generation, which the
        // broker still accepts while the group waits for this member's JoinGroup).
        try {
          await heartbeat();
        } catch (error) {
          if ((error as { type?: unknown }).type === "REBALANCE_IN_PROGRESS") await this.#revoke();
          throw error;
        }
      },
    };
    // Joins the group; a failed join is a CRASH (handled in #onCrash), not a rejection.
    await c.run(this.#runConfig);
    // Consuming has begun once the group was joined (or the start was aborted).
    await unlessAborted(joined, signal);
  }

  /** One connect-and-subscribe attempt: the consumer, then the admin client and the dead-letter producer. */
  async #connect(): Promise<void> {
    const c = this.#consumer;
    await c.connect();
    this.#subscribing = true; // until it succeeded: the start's catch reads it
    await c.subscribe({ topics: [...this.#topics], fromBeginning: this.#fromBeginning });
    this.#subscribing = false;
    if (this.#kafka) {
      this.#admin ??= this.#kafka.admin();
      await this.#admin.connect();
    }
    if (this.#deadLetters) await this.#deadLetters.producer.connect();
  }

  async #disconnectAll(): Promise<void> {
    await Promise.allSettled([this.#deadLetters?.producer.disconnect(), this.#admin?.disconnect(), this.#consumer.disconnect()]);
  }

  #topicNames(): string[] {
    return this.#topics.filter((t): t is string => typeof t === "string");
  }

  /** Reports a failed attempt to reach the cluster; returns the backoff before the next one. */
  #unavailable(error: unknown): number {
    this.#unreachable = true;
    return this.#sink?.unavailable(error, this.#brokers(error)) ?? 1_000;
  }

  #available(): void {
    this.#unreachable = false;
    this.#sink?.available();
  }

  /** The brokers an error names, else the one that answered last. */
  #brokers(error: unknown): string[] {
    const named = brokersOf(error);
    return named.length > 0 || this.#lastBroker === undefined ? named : [this.#lastBroker];
  }

  pause(partitions: readonly TopicPartition[]): void {
    if (this.#closed) return;
    try {
      this.#consumer.pause(groupByTopic(partitions));
    } catch {
      // not running (yet or any more): nothing is fetched anyway
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    if (this.#closed || this.#stopped) return;
    try {
      this.#consumer.resume(groupByTopic(partitions));
    } catch {
      // not running
    }
  }

  commit(offsets: readonly CommitOffset[]): Promise<void> {
    return this.#commits.commit(offsets);
  }

  stopFetching(): void {
    this.#stopped = true;
    this.#pauseAll();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    const c = this.#consumer;
    // KafkaJS arms its restart timer only after a crash's own disconnect returned, so a
    // crash during this close can bring the consumer back into the group, owning partitions
    // nobody processes: stop it again whenever it restarts or rejoins (these stay registered).
    c.on(c.events.CRASH, (e) => {
      if (e.payload.restart) setTimeout(() => void c.stop().catch(() => {}), 0); // after the timer is armed
    });
    c.on(c.events.GROUP_JOIN, () => void c.disconnect().catch(() => {}));
    // A connect attempt cut short by an abort may still connect something: disconnect again after it.
    void this.#attempt?.then(() => this.#disconnectAll());
    const closing = (async () => {
      try {
        await c.disconnect();
      } finally {
        this.#running = false;
        for (const remove of this.#removers) remove();
        this.#removers = [];
        if (this.#admin) await this.#admin.disconnect().catch(() => {});
        if (this.#deadLetters) await this.#deadLetters.producer.disconnect();
      }
    })();
    // During an outage KafkaJS may take long to leave the group (it retries): the shutdown
    // does not wait for that beyond the bound; the disconnect goes on in the background.
    if (!this.#unreachable && this.#everJoined) return await closing;
    void closing.catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closing, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_BOUND_MS)))]);
    clearTimeout(timer);
  }

  keyOf(message: KafkaMessage): string | undefined {
    const key = message.key;
    return key == null ? undefined : key.toString("latin1"); // one char per byte: distinct keys stay distinct
  }

  #pauseAll(): void {
    const topics = new Set<string>(this.#assignedTopics);
    for (const t of this.#topics) if (typeof t === "string") topics.add(t);
    try {
      this.#consumer.pause([...topics].map((topic) => ({ topic })));
    } catch {
      // not running
    }
  }

  /** The committed offsets and metadata of `partitions` (a few tries: a rejection only costs the claims). */
  async #committed(groupId: string, partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
    const admin = this.#admin!;
    const topics = [...new Set(partitions.map((p) => p.topic))];
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.#closed) break;
      try {
        return await readCommitted(admin, groupId, topics);
      } catch (error) {
        lastError = error;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    throw lastError ?? new Error("the consumer closed before the committed offsets were read");
  }

  #onJoin(memberAssignment: Record<string, number[]>, groupId: string): void {
    this.#revoking = undefined;
    this.#everJoined = true;
    this.#available(); // the group coordinator answered
    this.#joined?.resolve();
    const partitions: TopicPartition[] = [];
    for (const [topic, ps] of Object.entries(memberAssignment)) {
      for (const partition of ps) partitions.push({ topic, partition });
    }
    const topics = new Set<string>([...this.#assignedTopics, ...Object.keys(memberAssignment)]);
    for (const t of this.#topics) if (typeof t === "string") topics.add(t);
    this.#assignment = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    this.#assignedTopics = Object.keys(memberAssignment);
    // KafkaJS keeps pauses across rebalances: clear them all; the runner pauses anew what it needs.
    try {
      this.#consumer.resume([...topics].map((topic) => ({ topic })));
    } catch {
      // not running
    }
    const committed = this.#admin !== undefined && partitions.length > 0 && !this.#stopped
      ? this.#committed(groupId, partitions)
      : undefined;
    this.#sink?.assigned(partitions, committed);
    if (this.#stopped) this.#pauseAll();
  }

  #onRebalancing(): void {
    // Fire and forget unless eachBatch already awaited it: KafkaJS rejoins at once; the drain
    // is bounded and its commit best-effort.
    void this.#revoke();
  }

  /** One orderly revoke per rebalance, whether eachBatch or the REBALANCING event saw it first. */
  #revoke(): Promise<void> {
    this.#revoking ??= this.#sink?.revoking().catch(() => {}) ?? Promise.resolve();
    return this.#revoking;
  }

  #onCommitted(topics: ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: unknown }> }>): void {
    this.#unreachable = false;
    this.#commits.acknowledged(topics);
  }

  #onCrash(error: unknown, restart: boolean): void {
    if (this.#closed) return;
    this.#assignment = new Set();
    const sink = this.#sink;
    sink?.lost(); // KafkaJS disconnected: the partitions are lost; a rejoin brings a new GROUP_JOIN
    const refused = refusalOf(error, this.#topicNames(), this.#lastBroker, false);
    if (refused !== undefined || !isKafkaJSError(error)) {
      // Waiting cannot help: the consumer fails (KafkaJS does not restart a non-retriable crash).
      const reason = refused ?? error;
      this.#running = false;
      if (restart) void this.#consumer.stop().catch(() => {});
      this.#joined?.reject(reason);
      void this.#joined?.promise.catch(() => {});
      sink?.failed(reason);
      return;
    }
    const delayMs = this.#unavailable(error);
    if (this.#stopped || sink?.signal.aborted) return; // shutting down: nothing to restart
    const restartLater = (): void => {
      clearTimeout(this.#restartTimer);
      this.#restartTimer = setTimeout(() => {
        this.#restartTimer = undefined;
        if (this.#closed || this.#stopped || sink?.signal.aborted || !this.#runConfig) return;
        this.#consumer.run(this.#runConfig).catch((e: unknown) => this.#onCrash(e, false));
      }, delayMs);
    };
    if (!restart) {
      // KafkaJS gave up on it (e.g. "Failed to find group coordinator"): run it again after the backoff.
      restartLater();
      return;
    }
    // KafkaJS arms its own restart after this event, as late as its retry's maxRetryTime (30 s
    // by default) after a long outage: replace it by the capped backoff (stop() clears it).
    setTimeout(() => {
      if (this.#closed || this.#stopped) return;
      void this.#consumer.stop().then(restartLater, restartLater);
    }, 0);
  }

}

/**
 * A parallel consumer over a KafkaJS consumer, not started yet: call `start()`, stop
 * through `signal` (or `shutdown()`), and await `done`.
 *
 * @example
 * ```ts
 * import { Kafka } from "kafkajs";
 * import { createKafkaJSConsumer } from "offset-frontier/node";
 * const kafka = new Kafka({ brokers: ["127.0.0.1:9092"] });
 * const controller = new AbortController();
 * const consumer = createKafkaJSConsumer({
 *   consumer: kafka.consumer({ groupId: "orders", maxWaitTimeInMs: 500 }),
 *   topics: ["orders"],
 *   ordering: "key",
 *   concurrency: 100,
 *   handler: async (message, { partition, offset }) => { console.log(partition, offset, message.value?.toString()); },
 *   signal: controller.signal,
 * });
 * await consumer.start();
 * ```
 */
export function createKafkaJSConsumer(options: KafkaJSConsumerOptions): ParallelConsumer<KafkaMessage> {
  const { consumer, kafka, topics, fromBeginning, deadLetter, transactional, ...rest } = options;
  if (transactional !== undefined) {
    // The port opens (fences) each partition before reading its committed offsets: the client reads none.
    const client = new KafkaJSClient(consumer, topics, fromBeginning !== undefined ? { fromBeginning } : {});
    const port = new KafkaJSTransactions(kafka as Kafka, consumer, transactional, {
      ...(fromBeginning !== undefined ? { fromBeginning } : {}),
      ...(deadLetter !== undefined ? { deadLetter: transactionalDeadLetter(deadLetter) } : {}),
    });
    return new ParallelConsumer<KafkaMessage>(client, { ...rest, transactional: { ...transactional, port } });
  }
  const client = new KafkaJSClient(consumer, topics, {
    ...(fromBeginning !== undefined ? { fromBeginning } : {}),
    ...(deadLetter !== undefined ? { deadLetter } : {}),
    ...(kafka !== undefined ? { kafka } : {}),
  });
  return new ParallelConsumer<KafkaMessage>(client, { ...rest, handler: unlimitedSignalListeners(rest.handler) });
}

/** {@link createKafkaJSConsumer}, started: resolves once consuming has begun. */
export async function runKafkaJS(options: KafkaJSConsumerOptions): Promise<ParallelConsumer<KafkaMessage>> {
  const consumer = createKafkaJSConsumer(options);
  await consumer.start();
  return consumer;
}

/**
 * Starts a KafkaJS parallel consumer that shuts down gracefully when `listen`'s
 * callback fires (a runtime's SIGINT/SIGTERM) or `options.signal` aborts. `listen`
 * installs the runtime's handlers and returns a function that removes them; they are
 * removed at the first signal (a second one then gets the runtime's default: exit at
 * once) and when the consumer stops. Used by the Node, Bun and Deno adapters.
 */
export async function consumeUntil(
  options: KafkaJSConsumerOptions,
  listen: (shutdown: () => void) => () => void,
): Promise<ParallelConsumer<KafkaMessage>> {
  const controller = new AbortController();
  const user = options.signal;
  const onUser = (): void => controller.abort(user?.reason);
  if (user?.aborted) controller.abort(user.reason);
  else user?.addEventListener("abort", onUser, { once: true });
  let unlisten: (() => void) | undefined;
  const release = (): void => {
    unlisten?.();
    unlisten = undefined;
  };
  unlisten = listen(() => {
    release();
    controller.abort(new Error("shutdown signal"));
  });
  const consumer = createKafkaJSConsumer({ ...options, signal: controller.signal });
  void consumer.closed.then(() => {
    release();
    user?.removeEventListener("abort", onUser);
  });
  await consumer.start();
  return consumer;
}

export type { Consumer, Kafka, KafkaMessage, Producer } from "./kafkajs_types.ts";
export { DEAD_LETTER_HEADERS } from "./dead_letter_headers.ts";
export type { DeadLetterOptions } from "./kafkajs_dead_letter.ts";
export {
  type CommitEvent,
  type ConsumerEvents,
  type ConsumerMetrics,
  type DeadLetterEvent,
  type ErrorEvent,
  type Handler,
  type Ordering,
  ParallelConsumer,
  type PartitionMetrics,
  type PauseEvent,
  PartitionStoppedError,
  type OutputRecord,
  type RecordContext,
  type ResumeEvent,
  type RetryEvent,
  type TransactionalContext,
  type TransactionEvent,
  type TransactionMetrics,
} from "../core/mod.ts";
export { isFenced, type KafkaJSTransactionalOptions, KafkaJSTransactions, type TransactionalProducerStats } from "./kafkajs_transactions.ts";
