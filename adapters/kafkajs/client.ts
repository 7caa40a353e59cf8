/**
 * The KafkaJS binding's client port: the {@link ConsumerClient} over one KafkaJS (2.2.x)
 * consumer, shared by the Node, Bun and Deno entry points (`kafkajs.ts` has the options
 * and the factories).
 *
 * How it drives KafkaJS:
 * - `consumer.run()` with auto-commit off and an `eachBatch` that hands each batch to the
 *   runner whole and returns at once (adapters/kafkajs/run.ts, with the run's first join
 *   and the disconnect that waits for it); backpressure is `pause`/`resume`. KafkaJS
 *   heartbeats after every batch and every empty fetch. A fetcher whose partitions are
 *   all paused waits for a resume instead of sleeping out `maxWaitTimeInMs`
 *   (adapters/kafkajs/paused_wake.ts). Aborted transactions are left
 *   out by Kafka's own rule, not KafkaJS's filter (adapters/kafkajs/read_committed.ts).
 * - Commits go only through `consumer.commitOffsets`, only for partitions of the
 *   current assignment (the broker accepts commits from a member for partitions it no
 *   longer owns: kafkajs #1046), and count as acknowledged only when KafkaJS reports
 *   the `COMMIT_OFFSETS` event for them (KafkaJS resolves `commitOffsets` without
 *   sending anything once the consumer stopped).
 * - `GROUP_JOIN` (its `memberAssignment`; adapters/kafkajs/assignment.ts) starts a new
 *   assignment with fresh trackers and clears stale pauses (KafkaJS keeps pauses across
 *   rebalances), after reading the partitions' committed offsets and metadata (the
 *   completed sets) through the consumer's own cluster (adapters/kafkajs/joined_group.ts:
 *   the consumer group that emitted the event); where that group cannot be reached (a
 *   second KafkaJS copy) with the admin client of `kafka`, and without `kafka` the binding
 *   refuses (at construction, or the first join fails the consumer) rather than write
 *   completed sets nobody reads back;
 *   a rebalance begins an orderly revoke (stop dispatching, drain within a bound,
 *   commit). Found by the heartbeat inside `eachBatch`, the revoke is awaited there, so
 *   KafkaJS rejoins only after the drain's commit; found by KafkaJS itself
 *   (`REBALANCING`), it rejoins at once and the drain's commit is best-effort. A join
 *   without a revoke (session expired) or a `CRASH` loses the partitions: never
 *   committed again.
 * - Ownership: a successful heartbeat (`HEARTBEAT`, after the `REQUEST` event that names
 *   when it was sent) is `ClientSink.owned`: the coordinator accepted this member's
 *   generation, so the current assignment holds. A member whose session expired (a
 *   zombie) is refused and rejoins; the exactly-once mode reopens a partition reset after a
 *   failed transaction only on such an answer to a heartbeat sent after the failure.
 * - Outages (adapters/kafkajs/outage.ts): while the cluster does not answer (connect,
 *   subscribe, join, coordinator lookup) the start keeps trying with the runner's capped
 *   backoff, reporting each failed attempt (`ClientSink.unavailable`). Every `CRASH` that
 *   is not a refusal is restarted after that backoff (`consumer.run` again; the next
 *   `GROUP_JOIN` brings fresh trackers and reads the committed offsets back). Refusals
 *   (authentication, authorization, an unknown topic when subscribing, and with `kafka` given
 *   a dead-letter topic that does not exist) fail at once with a `ClusterRefusedError`. A dead letter waits for the cluster the same way.
 *   The sink's signal (shutdown, give-up) ends every wait; during an outage (or a start
 *   that never reached the cluster) `close()` waits at most 3 s for KafkaJS to disconnect
 *   (the rest goes on in the background).
 *
 * @module
 */
import type { Consumer, Kafka, KafkaMessage } from "./types.ts";
import { installJoinedGroup, requireReadBack, unreachableGroupError } from "./joined_group.ts";
import { GroupReads } from "./group_reads.ts";
import { KafkaJSAssignment } from "./assignment.ts";
import { KafkaJSCommits } from "./commits.ts";
import { type DeadLetterOptions, deadLetterTopicsExist, KafkaJSDeadLetters, topicOf } from "./dead_letter.ts";
import { KafkaJSOutage } from "./outage.ts";
import { unlessAborted } from "./waits.ts";
import { installReadCommitted } from "./read_committed.ts";
import { groupByTopic } from "../shared/topic_partitions.ts";
import type { ClientSink, CommitOffset, ConsumerClient, DeadLetterInfo, EndOffset, ProbeResult, TopicPartition } from "../../core/consumer/port/mod.ts";
import { probeSeedBrokers } from "./probe.ts";
import { describe, InvalidArgumentError } from "../../core/errors.ts";
import { unlimitedListeners } from "../shared/signal_listeners.ts";
import { keyBytesHash } from "../shared/key_hash.ts";
import { installPausedWake } from "./paused_wake.ts";
import { refuseTaken, release, take } from "../shared/driven.ts";
import { KafkaJSRun } from "./run.ts";
import { checkArguments } from "./arguments.ts";

/** How long `close()` waits for KafkaJS to leave and disconnect before it returns (the rest goes on in the background). */
const CLOSE_BOUND_MS = 3_000;

/**
 * Frees a consumer whose binding was built but never started, because the construction
 * around it was refused afterwards (a runner option, the transactional port): a refused
 * construction takes nothing.
 * @param consumer the KafkaJS consumer given to that binding
 */
export function releaseUnstarted(consumer: Consumer): void {
  release(consumer);
}

/**
 * The {@link ConsumerClient} over one KafkaJS consumer. Most users call
 * `createKafkaJSConsumer` (adapters/kafkajs/mod.ts, or an adapter's `consume`) instead.
 */
export class KafkaJSClient implements ConsumerClient<KafkaMessage> {
  readonly #consumer: Consumer;
  readonly #topics: ReadonlyArray<string | RegExp>;
  readonly #fromBeginning: boolean;
  readonly #deadLetters: KafkaJSDeadLetters | undefined;
  readonly #kafka: Kafka | undefined;
  readonly #readsCommitted: boolean;
  readonly #reads: GroupReads; // committed positions at each join, paused partitions' log ends
  #sink: ClientSink<KafkaMessage> | undefined;
  readonly #assignment: KafkaJSAssignment;
  #stopped = false;
  #closed = false;
  #running = false;
  readonly #run: KafkaJSRun; // consumer.run(), its eachBatch, its first join
  readonly #commits: KafkaJSCommits;
  #removers: Array<() => void> = [];
  #attempt: Promise<void> | undefined; // a connect-and-subscribe attempt in progress
  #joined: { promise: Promise<void>; resolve(): void; reject(e: unknown): void } | undefined; // the first GROUP_JOIN
  readonly #outage: KafkaJSOutage;
  #everJoined = false; // a GROUP_JOIN came: the start reached the cluster
  #subscribing = false; // the attempt reached subscribe: an unknown topic there means "no such topic"
  #heartbeatSentAt: number | undefined; // when the heartbeat answered last was sent (KafkaJS sends one at a time)
  readonly #deadLetterTopics: readonly string[];
  /** One direct attempt to each seed broker; present only when the KafkaJS client was given. */
  readonly probe?: () => Promise<ProbeResult>;
  /** The log end offsets of paused partitions (admin `fetchTopicOffsets`); present only when the KafkaJS client was given. */
  readonly endOffsets?: (partitions: readonly TopicPartition[]) => Promise<readonly EndOffset[]>;
  /** Produces a dead letter; present only when a dead-letter producer was given. */
  readonly deadLetter?: (message: KafkaMessage, info: DeadLetterInfo) => Promise<void>;

  /**
   * A binding over one KafkaJS consumer (not connected yet).
   * @param consumer a KafkaJS consumer, not connected
   * @param topics topics to subscribe to
   * @param options `fromBeginning`, the dead-letter producer, the KafkaJS client (`kafka`: the
   *   give-up probe, and committed offsets read with its admin client where the consumer's own
   *   group cannot be reached; `probe`: the probe only), `readsCommitted` (default `true`:
   *   each new assignment reads its committed offsets and metadata; `false` where a
   *   transactional port reads them after fencing)
   * @throws {InvalidArgumentError} for a bad consumer, topics or dead-letter producer, a
   *   consumer already driven, or no `kafka` where the consumer's group cannot be wrapped
   *   (the completed sets could not be read back)
   */
  constructor(
    consumer: Consumer,
    topics: ReadonlyArray<string | RegExp>,
    options: { fromBeginning?: boolean; deadLetter?: DeadLetterOptions; kafka?: Kafka; probe?: Kafka; readsCommitted?: boolean } = {},
  ) {
    checkArguments(consumer, topics, options.kafka);
    this.#readsCommitted = options.readsCommitted ?? true;
    if (this.#readsCommitted) requireReadBack(options.kafka, installJoinedGroup());
    // One KafkaJS consumer serves one binding for its life: its `run()` can be called once,
    // and `close()` leaves listeners on it that stop it for good.
    refuseTaken(consumer, "(KafkaJS runs a consumer once): make a new one with kafka.consumer({ groupId, … }) for each");
    this.#consumer = consumer;
    this.#run = new KafkaJSRun(consumer);
    this.#kafka = options.kafka;
    const seeds = options.probe ?? options.kafka;
    if (seeds !== undefined) this.probe = () => probeSeedBrokers(seeds);
    // Paused partitions' log ends (no fetch reports them): the admin client's ListOffsets, at the commit interval.
    const reads = this.#reads = new GroupReads(options.kafka);
    this.endOffsets = (partitions) => reads.endOffsets(partitions); // paused partitions: no fetch reports theirs
    this.#topics = topics;
    this.#fromBeginning = options.fromBeginning ?? false;
    const outage = this.#outage = new KafkaJSOutage({
      consumer,
      sink: () => this.#sink,
      topicNames: () => this.#topics.filter((t): t is string => typeof t === "string"),
      closed: () => this.#closed,
      stopped: () => this.#stopped,
    });
    const assignment = this.#assignment = new KafkaJSAssignment({
      consumer,
      topics,
      sink: () => this.#sink,
      closed: () => this.#closed,
      stopped: () => this.#stopped,
    });
    this.#commits = new KafkaJSCommits({
      consumer,
      running: () => !this.#closed && this.#running,
      assigned: (topic, partition) => assignment.has(topic, partition),
      unreachable: (error) => void outage.unavailable(error),
    });
    const dlq = options.deadLetter;
    if (dlq) {
      if (!dlq.producer || typeof dlq.producer.send !== "function") {
        throw new InvalidArgumentError(`deadLetter.producer must be a KafkaJS producer; got ${describe(dlq.producer)}`);
      }
      const deadLetters = this.#deadLetters = new KafkaJSDeadLetters(dlq, {
        sink: () => this.#sink,
        closed: () => this.#closed,
        available: () => outage.available(),
        unavailable: (error) => outage.unavailable(error),
      });
      this.deadLetter = (message, info) => deadLetters.produce(message, info);
    }
    // Checked at the start where the admin client can tell (`kafka` given; the names of the subscribed topics).
    const dlqTopic = dlq ? topicOf(dlq.topic) : undefined;
    this.#deadLetterTopics = dlqTopic ? topics.filter((t): t is string => typeof t === "string").map(dlqTopic) : [];
    take(consumer); // last: a refused construction takes nothing
  }

  /** Partitions of the current assignment. */
  assignment(): TopicPartition[] {
    return this.#assignment.partitions();
  }

  async start(sink: ClientSink<KafkaMessage>): Promise<void> {
    this.#sink = sink;
    installReadCommitted(); // before the first fetch: aborted transactions filtered by Kafka's rule
    installPausedWake(); // a fetcher whose partitions are all paused waits for a resume, not out its maxWaitTime
    const c = this.#consumer;
    const signal = sink.signal;
    this.#removers.push(
      c.on(c.events.GROUP_JOIN, (e) => this.#onJoin(e.payload)),
      // Fire and forget unless eachBatch already awaited it: KafkaJS rejoins at once; the drain
      // is bounded and its commit best-effort.
      c.on(c.events.REBALANCING, () => void this.#assignment.revoke(false)),
      c.on(c.events.COMMIT_OFFSETS, (e) => this.#onCommitted(e.payload.topics)),
      c.on(c.events.CRASH, (e) => this.#onCrash(e.payload.error, e.payload.restart)),
      c.on(c.events.REQUEST, (e) => {
        this.#outage.requested(e.payload.broker);
        // Emitted when the answer arrived, before KafkaJS parsed it: a HEARTBEAT event that follows is its success.
        if (e.payload.apiName === "Heartbeat") this.#heartbeatSentAt = e.payload.sentAt;
      }),
      // The coordinator accepted this member's generation: the assignment still holds (exactly-once resets wait for it).
      c.on(c.events.HEARTBEAT, () => {
        const sentAt = this.#heartbeatSentAt;
        if (sentAt !== undefined) sink.owned?.(sentAt);
      }),
    );
    let resolveJoined!: () => void, rejectJoined!: (e: unknown) => void;
    const joined = new Promise<void>((resolve, reject) => ((resolveJoined = resolve), (rejectJoined = reject)));
    this.#joined = { promise: joined, resolve: resolveJoined, reject: rejectJoined };
    // Connect and subscribe, waiting out an unreachable cluster; refusals fail at once.
    const attempt = (): Promise<void> => {
      this.#subscribing = false;
      const a = this.#connect();
      this.#attempt = a.then(() => {}, () => {});
      return a;
    };
    try {
      if (!(await this.#outage.connect(attempt, () => this.#subscribing, signal))) return; // close() cleans up after it
    } catch (refused) {
      // A failed start leaves nothing connected (an open producer keeps a process alive).
      await this.#disconnectAll();
      throw refused;
    }
    this.#running = true;
    this.#run.configure(sink, () => this.#assignment.revoke(true));
    // Joins the group; a failed join is a CRASH (handled in #onCrash), not a rejection.
    await this.#run.run();
    // Consuming has begun once the group was joined (or the start was aborted).
    await unlessAborted(joined, signal);
  }

  /** One connect-and-subscribe attempt: the consumer, then the dead-letter producer. */
  async #connect(): Promise<void> {
    const c = this.#consumer;
    await c.connect();
    this.#subscribing = true; // until it succeeded: the start's catch reads it
    await c.subscribe({ topics: [...this.#topics], fromBeginning: this.#fromBeginning });
    this.#subscribing = false;
    if (this.#deadLetters) await this.#deadLetters.producer.connect();
    if (this.#kafka && this.#deadLetterTopics.length > 0) await deadLetterTopicsExist(await this.#reads.admin(this.#kafka), this.#deadLetterTopics);
  }

  async #disconnectAll(): Promise<void> {
    await Promise.allSettled([this.#deadLetters?.producer.disconnect(), this.#reads.disconnect(), this.#run.disconnect()]);
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
    this.#assignment.pauseAll();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#reads.close();
    this.#outage.close();
    this.#run.keepStopped(); // a crash's restart or a join under way could bring it back into the group
    // A connect attempt cut short by an abort may still connect something: disconnect again after it.
    void this.#attempt?.then(() => this.#disconnectAll());
    const closing = (async () => {
      try {
        await this.#run.disconnect();
      } finally {
        this.#running = false;
        for (const remove of this.#removers) remove();
        this.#removers = [];
        await this.#reads.disconnect();
        if (this.#deadLetters) await this.#deadLetters.producer.disconnect();
      }
    })();
    // During an outage KafkaJS may take long to leave the group (it retries): the shutdown
    // does not wait for that beyond the bound; the disconnect goes on in the background.
    if (!this.#outage.unreachable && this.#everJoined) return await closing;
    void closing.catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closing, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_BOUND_MS)))]);
    clearTimeout(timer);
  }

  recordSignal(signal: AbortSignal): void {
    unlimitedListeners(signal);
  }

  keyOf(message: KafkaMessage): string | undefined {
    const key = message.key;
    return key == null ? undefined : key.toString("latin1"); // one char per byte: distinct keys stay distinct
  }

  keyHashOf(message: KafkaMessage): number | undefined {
    return keyBytesHash(message.key); // over the bytes: no string per record
  }

  #onJoin(payload: { groupId: string; memberId: string; memberAssignment: Record<string, number[]> }): void {
    this.#everJoined = true;
    this.#outage.available(); // the group coordinator answered
    this.#joined?.resolve();
    if (!this.#readsCommitted) return this.#assignment.joined(payload.memberAssignment);
    // Synchronously, inside KafkaJS's emit: the group noted last is the one that emitted this event.
    const read = this.#reads.joined(payload);
    if (read !== undefined) return this.#assignment.joined(payload.memberAssignment, read);
    // A KafkaJS copy other than the one wrapped, and no `kafka`: its completed sets could not be read back.
    this.#sink?.failed(unreachableGroupError());
    // The runner does not close a client that failed: leave the group and disconnect, once
    // KafkaJS's run is under way (a stop inside its join is a no-op, and the run goes on).
    setTimeout(() => void this.close(), 0);
  }

  #onCommitted(topics: ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: unknown }> }>): void {
    this.#outage.answered();
    this.#commits.acknowledged(topics);
  }

  #onCrash(error: unknown, restart: boolean): void {
    if (this.#closed) return;
    this.#assignment.lost();
    const sink = this.#sink;
    sink?.lost(); // KafkaJS disconnected: the partitions are lost; a rejoin brings a new GROUP_JOIN
    const refused = this.#outage.refusal(error, false);
    if (refused !== undefined) {
      // Waiting cannot help: the consumer fails (KafkaJS does not restart a non-retriable crash).
      const { reason } = refused;
      this.#running = false;
      if (restart) void this.#consumer.stop().catch(() => {});
      this.#joined?.reject(reason);
      void this.#joined?.promise.catch(() => {});
      sink?.failed(reason);
      return;
    }
    this.#outage.crashed(error, restart, () => {
      if (this.#run.configured) this.#run.run().catch((e: unknown) => this.#onCrash(e, false));
    });
  }
}
