/**
 * The `@platformatic/kafka` binding's client port: the {@link ConsumerClient} over one
 * `@platformatic/kafka` `Consumer` (classic group protocol), shared by Node (≥ 22.22 or ≥
 * 24.6), Bun and Deno.
 *
 * How it drives the client (its public API and exported protocol APIs only):
 * - Group: `consumer.topics.track(topic)` then `consumer.joinGroup({ protocolsMetadata })`;
 *   the client heartbeats and rejoins by itself. Its `protocolsMetadata` hook is awaited
 *   before every JoinGroup it sends, while the old generation is still valid: that is the
 *   awaited revoke; `consumer:group:join` brings the new assignment and generation
 *   (membership.ts: eager assignors give up everything at each rebalance, orderly after a
 *   REBALANCE_IN_PROGRESS and else as a loss; cooperative-sticky gives up only the
 *   partitions that move, in their own round, and the rest carry on).
 * - Fetching (adapters/platformatic/fetcher.ts): the binding's own loop over
 *   `consumer.fetch`, per-partition pause and resume, `read_committed` applied with the
 *   fetch's aborted-transaction list (aborted_filter.ts).
 * - Commits (commits.ts): OffsetCommit v8 with the completed set as `committedMetadata`,
 *   acknowledged only when every partition's error code is 0; committed offsets and
 *   metadata read at each assignment with OffsetFetch v8 (group_requests.ts); partitions
 *   without one start at the earliest or latest offset (`consumer.listOffsets`).
 * - Outages: the start's join is retried with the runner's capped backoff while the
 *   cluster does not answer; refusals fail at once with a `ClusterRefusedError`; a failed
 *   rejoin (the client's `error` event) loses the partitions and joins again after the
 *   backoff; failed fetches and heartbeats are reported, a fetch or join that answers ends
 *   the outage. A join the group itself turned down (REBALANCE_IN_PROGRESS,
 *   UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, MEMBER_ID_REQUIRED once the client's `retries`
 *   are used up) is no outage: the member joins again at once, with no backoff and no
 *   `unavailable` event.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import type { ClientSink, CommitOffset, ConsumerClient, DeadLetterInfo, EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { ClusterRefusedError, describe, InvalidArgumentError } from "../../core/errors.ts";
import { unlimitedListeners } from "../shared/signal_listeners.ts";
import { keyBytesHash } from "../shared/key_hash.ts";
import { sleepUnlessAborted, unlessAborted } from "../kafkajs/waits.ts";
import { PlatformaticCommits } from "./commits.ts";
import { type PlatformaticDeadLetterOptions, PlatformaticDeadLetters, topicOf } from "./dead_letter.ts";
import { checkTopicsExist, type MetadataClient } from "./topic_check.ts";
import { brokersOf, isGroupAnswer, isUnreachable, refusalOf } from "./errors.ts";
import { Fetcher, type FetchSettings } from "./fetcher.ts";
import { type JoinEvent, Membership } from "./membership.ts";
import type { ClientConsumer, PlatformaticConsumer, PlatformaticMessage } from "./types.ts";
import { groupOptions } from "./group_options.ts";
import { refuseTaken, take } from "../shared/driven.ts";

/**
 * How long `close()` waits for the client to leave the group and disconnect; the rest goes on
 * in the background. An outage makes it long, and so does a rebalance that waits for a member
 * that died: the client's LeaveGroup is answered only after the JoinGroup the coordinator
 * holds until that rebalance ends (up to the dead member's session, or the rebalance timeout).
 */
const CLOSE_BOUND_MS = 3_000;

/** Options of a {@link PlatformaticClient}. */
export interface PlatformaticClientOptions extends Partial<FetchSettings> {
  /** Dead-letter producer and topic. */
  deadLetter?: PlatformaticDeadLetterOptions;
  /**
   * Dead-letter topics the start checks exist besides those of `deadLetter` (exactly-once
   * mode: dead letters go in the record's transaction, not through `deadLetter`'s producer).
   */
  deadLetterTopics?: readonly string[];
  /**
   * Exactly-once mode: the transactional port reads the committed offsets (after fencing)
   * and positions the partitions through {@link PlatformaticClient.seek}; the client reads
   * none at assignment. Default `false`.
   */
  transactional?: boolean;
}

/** The {@link ConsumerClient} over one `@platformatic/kafka` consumer. Most users call `createPlatformaticConsumer`. */
export class PlatformaticClient implements ConsumerClient<PlatformaticMessage> {
  readonly #consumer: ClientConsumer;
  readonly #topics: readonly string[];
  readonly #settings: FetchSettings;
  readonly #deadLetters: PlatformaticDeadLetters | undefined;
  readonly #commits: PlatformaticCommits;
  #sink: ClientSink<PlatformaticMessage> | undefined;
  #fetcher: Fetcher | undefined;
  readonly #membership: Membership;
  #closed = false;
  #stopped = false;
  #unreachable = false;
  #reached = false; // the cluster answered once: the runner was told (a clean first join must end its "connecting")
  #removers: Array<() => void> = [];
  #rejoinTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #transactional: boolean;
  #heartbeatSentAt: number | undefined; // when the heartbeat in flight was sent (`Date.now()`)
  readonly #joinOptions: { protocolsMetadata: () => Promise<Buffer> };
  readonly #deadLetterTopics: readonly string[];
  #topicsChecked = false;
  /** Produces a dead letter; present only when a dead-letter producer was given. */
  readonly deadLetter?: (message: PlatformaticMessage, info: DeadLetterInfo) => Promise<void>;

  /**
   * A binding over one consumer (created, not joined).
   * @param consumer a `@platformatic/kafka` consumer: `new Consumer({ groupId, clientId, bootstrapBrokers })`
   * @param topics the topics to subscribe to (names)
   * @param options fetch settings and the dead-letter producer
   */
  constructor(consumer: PlatformaticConsumer, topics: readonly string[], options: PlatformaticClientOptions = {}) {
    if (!consumer || typeof consumer.joinGroup !== "function" || typeof consumer.fetch !== "function") {
      throw new InvalidArgumentError(`consumer must be a @platformatic/kafka Consumer; got ${describe(consumer)}`);
    }
    if (!Array.isArray(topics) || topics.length === 0) {
      throw new InvalidArgumentError(`topics must be a non-empty array of topic names; got ${describe(topics)}`);
    }
    for (const t of topics) {
      if (typeof t !== "string" || t === "") throw new InvalidArgumentError(`topics must hold non-empty topic names; got ${describe(t)}`);
    }
    refuseTaken(
      consumer,
      "(both would join its group and fetch through it, and every record would be handled twice): make a new one with new Consumer({ groupId, clientId, bootstrapBrokers }) for each",
    );
    const client = consumer as unknown as ClientConsumer;
    const { cooperative } = groupOptions(client); // refuses what the binding cannot run (KIP-848, its own protocolsMetadata)
    this.#consumer = client;
    this.#topics = topics;
    this.#settings = {
      maxWaitTime: options.maxWaitTime ?? 500,
      maxBytesPerPartition: options.maxBytesPerPartition ?? 1_048_576,
      maxBytes: options.maxBytes ?? 52_428_800,
      readCommitted: options.readCommitted ?? true,
      fromBeginning: options.fromBeginning ?? false,
    };
    this.#transactional = options.transactional ?? false;
    if (this.#transactional && cooperative) {
      throw new InvalidArgumentError("transactional (exactly-once) runs with eager assignors only for now; got the cooperative-sticky assignor in the consumer's protocols");
    }
    const membership = this.#membership = new Membership({
      consumer: client,
      cooperative,
      transactional: this.#transactional,
      settings: this.#settings,
      sink: () => this.#sink,
      fetcher: () => this.#fetcher,
      closed: () => this.#closed,
      stopped: () => this.#stopped,
      available: () => this.#available(),
      unavailable: (error) => this.#unavailable(error),
    });
    this.#joinOptions = { protocolsMetadata: () => membership.beforeJoin() };
    this.#commits = new PlatformaticCommits({
      consumer: client,
      running: () => !this.#closed && this.#sink !== undefined,
      generation: () => membership.generation,
      assigned: (topic, partition) => membership.holds(topic, partition),
      unreachable: (error) => this.#unavailable(error),
      answered: () => this.#available(),
    });
    if (options.deadLetter) {
      const dlq = options.deadLetter;
      if (!dlq.producer || typeof dlq.producer.send !== "function") {
        throw new InvalidArgumentError(`deadLetter.producer must be a @platformatic/kafka Producer; got ${describe(dlq.producer)}`);
      }
      const deadLetters = this.#deadLetters = new PlatformaticDeadLetters(dlq, { sink: () => this.#sink, closed: () => this.#closed });
      this.deadLetter = (message, info) => deadLetters.produce(message, info);
    }
    const dlqTopic = options.deadLetter ? topicOf(options.deadLetter.topic) : undefined;
    this.#deadLetterTopics = [...(dlqTopic ? topics.map(dlqTopic) : []), ...(options.deadLetterTopics ?? [])];
    take(consumer); // last: a refused construction takes nothing
  }

  /** Partitions of the current assignment. */
  assignment(): TopicPartition[] {
    return this.#membership.partitions();
  }

  /**
   * The generation of the current assignment and this member's id, while the client is still
   * in that generation; `undefined` between assignments (exactly-once: no offsets are sent then).
   */
  membership(): { generationId: number; memberId: string } | undefined {
    const generationId = this.#membership.generation;
    const memberId = this.#consumer.memberId;
    if (this.#closed || generationId === undefined || generationId !== this.#consumer.generationId || !memberId) return undefined;
    return { generationId, memberId };
  }

  /**
   * Moves the fetch positions of partitions of the current assignment (by `tpKey`; exactly-once:
   * to the committed offsets read after fencing); `unknownOnly`: only where none is known yet.
   */
  seek(positions: ReadonlyMap<string, number>, unknownOnly: boolean): void {
    this.#fetcher?.seek(positions, unknownOnly);
  }

  async start(sink: ClientSink<PlatformaticMessage>): Promise<void> {
    this.#sink = sink;
    const c = this.#consumer;
    this.#fetcher = new Fetcher(c, sink, this.#settings);
    const on = <E extends Parameters<ClientConsumer["on"]>[0]>(event: E, listener: Parameters<ClientConsumer["on"]>[1]): void => {
      c.on(event, listener);
      this.#removers.push(() => c.off(event, listener));
    };
    on("consumer:group:join", ((p: JoinEvent) => this.#membership.joined(p)) as never);
    on("consumer:group:rebalance", (() => this.#membership.rebalancing()) as never);
    on("consumer:heartbeat:error", ((p: { error: unknown }) => {
      if (isUnreachable(p.error)) this.#unavailable(p.error);
    }) as never);
    // An answered heartbeat: the coordinator still has this member in its generation (exactly-once resets wait for it).
    on("consumer:heartbeat:start", (() => void (this.#heartbeatSentAt = Date.now())) as never);
    on("consumer:heartbeat:end", ((p: { generationId?: number }) => {
      this.#available();
      const sentAt = this.#heartbeatSentAt;
      this.#heartbeatSentAt = undefined;
      const generation = this.#membership.generation;
      if (sentAt !== undefined && generation !== undefined && p?.generationId === generation) sink.owned?.(sentAt);
    }) as never);
    // Never removed: a join pending at the close (its JoinGroup held by a rebalance) fails once
    // the client's connections are gone, and the client emits that as `error`; with no listener
    // it would be an uncaught exception after `done`. After the close it is ignored.
    c.on("error", ((error: unknown) => this.#onRejoinFailed(error)) as never);
    for (const t of this.#topics) c.topics.track(t);
    const signal = sink.signal;
    for (;;) {
      if (signal.aborted || this.#closed) return;
      try {
        if (!this.#topicsChecked) {
          // Fails fast where the join would retry for seconds and name no topic (issue 42).
          if ((await unlessAborted(this.#checkTopics(signal).then(() => true), signal)) === undefined) return;
          this.#topicsChecked = true;
        }
        if ((await unlessAborted(c.joinGroup(this.#joinOptions), signal)) === undefined) return;
        break;
      } catch (error) {
        if (signal.aborted || this.#closed) return;
        const refused = error instanceof ClusterRefusedError ? error : refusalOf(error, this.#topics, true);
        if (refused !== undefined) {
          await this.#closeClients();
          throw refused;
        }
        if (isGroupAnswer(error)) continue; // the group answered (it is rebalancing): join again at once
        if (!(await sleepUnlessAborted(this.#unavailable(error), signal))) return;
      }
    }
    this.#available();
    this.#fetcher.run();
  }

  pause(partitions: readonly TopicPartition[]): void {
    this.#fetcher?.setPaused(partitions, true);
  }

  resume(partitions: readonly TopicPartition[]): void {
    if (this.#closed || this.#stopped) return;
    this.#fetcher?.setPaused(partitions, false);
  }

  commit(offsets: readonly CommitOffset[]): Promise<void> {
    return this.#commits.commit(offsets);
  }

  /** Paused partitions' log end offsets (the fetcher's `listOffsets`), for the lag in `metrics()`. */
  endOffsets(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]> {
    return this.#fetcher && !this.#closed ? this.#fetcher.endOffsets(partitions) : Promise.resolve([]);
  }

  stopFetching(): void {
    this.#stopped = true;
    void this.#fetcher?.stop();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#rejoinTimer);
    await this.#fetcher?.stop();
    const closing = this.#closeClients();
    void closing.catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closing, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_BOUND_MS)))]);
    clearTimeout(timer);
  }

  recordSignal(signal: AbortSignal): void {
    unlimitedListeners(signal);
  }

  keyOf(message: PlatformaticMessage): string | undefined {
    const key = message.key;
    return key == null ? undefined : key.toString("latin1"); // one char per byte: distinct keys stay distinct
  }

  keyHashOf(message: PlatformaticMessage): number | undefined {
    return keyBytesHash(message.key); // over the bytes: no string per record
  }

  async #closeClients(): Promise<void> {
    const c = this.#consumer;
    try {
      await c.close();
    } catch {
      await c.close(true).catch(() => {});
    } finally {
      for (const remove of this.#removers) remove();
      this.#removers = [];
      if (this.#deadLetters) await this.#deadLetters.producer.close().catch(() => {});
    }
  }

  /** The subscribed topics and the dead-letter topics exist (else a `ClusterRefusedError` of kind `unknown-topic`). */
  async #checkTopics(signal: AbortSignal): Promise<void> {
    await checkTopicsExist(this.#consumer, this.#topics, "topic", signal);
    const producer = this.#deadLetters?.producer as MetadataClient | undefined;
    await checkTopicsExist(producer ?? this.#consumer, this.#deadLetterTopics, "dead-letter topic", signal);
  }

  #unavailable(error: unknown): number {
    this.#unreachable = true;
    return this.#sink?.unavailable(error, brokersOf(error)) ?? 1_000;
  }

  #available(): void {
    if (!this.#unreachable && this.#reached) return;
    this.#reached = true;
    this.#unreachable = false;
    this.#sink?.available();
  }

  /** The client's `error` event: a rejoin failed for good; the partitions are lost, the join is tried again after the backoff. */
  #onRejoinFailed(error: unknown): void {
    const sink = this.#sink;
    if (this.#closed || !sink || sink.signal.aborted) return;
    this.#membership.lose();
    const refused = refusalOf(error, this.#topics, false);
    if (refused !== undefined) {
      sink.failed(refused);
      return;
    }
    clearTimeout(this.#rejoinTimer);
    this.#rejoinTimer = setTimeout(() => {
      if (this.#closed || sink.signal.aborted) return;
      this.#consumer.joinGroup(this.#joinOptions).catch((e: unknown) => this.#onRejoinFailed(e));
    }, isGroupAnswer(error) ? 0 : this.#unavailable(error)); // the group's own answer: no outage, join again at once
  }
}
