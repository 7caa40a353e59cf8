/**
 * The Confluent binding's client port: the {@link ConsumerClient} over one
 * `@confluentinc/kafka-javascript` consumer (Node only; `confluent.ts` refuses Bun and Deno).
 *
 * How it drives the client:
 * - the binding creates the consumer itself (`kafka.consumer(config)`), adding
 *   `enable.auto.commit: false` and its own `rebalance_cb`, which the client awaits:
 *   a revoke drains the revoked partitions within `drainTimeoutMs` and commits them (with
 *   the completed set) before the callback returns, i.e. before the partitions go. With
 *   the cooperative assignor (`partition.assignment.strategy: "cooperative-sticky"`) or
 *   the KIP-848 protocol (`group.protocol: "consumer"`) only the partitions that move are
 *   revoked; the others carry on untouched (incremental assignments);
 * - each assignment reads the new partitions' committed offsets and metadata (through the
 *   internal client) so records an earlier owner finished are skipped, and hands those
 *   offsets back to the client as the partitions' start positions (see `#rebalance` and
 *   `confluent_positions.ts`);
 * - `eachBatch` registers the batch and returns at once (records run on the runner's
 *   pool); a batch not taken is left unresolved, so the client seeks back and delivers it
 *   again; backpressure is per-partition `pause`/`resume`;
 * - commits go through `commitOffsets` one at a time and count as acknowledged only when
 *   librdkafka's commit outcome (`offset_commit_cb`) reports them without error: the
 *   promise of `commitOffsets` itself resolves once the commit is queued, before the
 *   broker answered; an outcome that is late (librdkafka holds it while the awaited
 *   rebalance callback runs) is replaced by reading the committed offsets back (see
 *   `confluent_commits.ts`);
 * - broker outages reach the runner (`unavailable` / `available`) from librdkafka's error
 *   events, probes and signs of life (see `confluent_outage.ts`); a start waits out an
 *   unreachable cluster, connecting a fresh consumer per attempt (see `confluent_start.ts`);
 * - dead letters go through a producer of the client (`acks` all, the default).
 *
 * @module
 */
import type { ClientSink, CommitOffset, ConsumerClient, DeadLetterInfo, EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { CLAIM_READ_MS } from "../../core/consumer/commits/mod.ts";
import { batchOffsets } from "../shared/batch_offsets.ts";
import { groupByTopic, tpKey } from "../shared/topic_partitions.ts";
import { InvalidArgumentError, describe } from "../../core/errors.ts";
import { type CommitEventSource, CommitVerifier } from "./commits.ts";
import { ConfluentCommitQueue } from "./commit_queue.ts";
import { consumerConfig, resetPolicy } from "./config.ts";
import { type ConfluentDeadLetterOptions, DeadLetterProducer } from "./dead_letter.ts";
import { type ErrorEventSource, OutageWatch } from "./outage.ts";
import { type CommittedSource, ConfluentPositions } from "./positions.ts";
import { ConfluentStart, type ProbedClient } from "./start.ts";
import type {
  ConfluentAssignmentFns,
  ConfluentConsumer,
  ConfluentConsumerConfig,
  ConfluentKafka,
  ConfluentMessage,
  ConfluentRebalanceError,
  ConfluentStartingPartition,
  ConfluentTopicPartition,
} from "./types.ts";
import { unlimitedListeners } from "../shared/signal_listeners.ts";
import { keyBytesHash } from "../shared/key_hash.ts";
import { endOffsetOf } from "../shared/end_offsets.ts";
import { ConfluentEndOffsets } from "./end_offsets.ts";

/**
 * How long the rebalance callback waits for the committed read at assignment before it
 * leaves the lookup to librdkafka: twice the runner's bound on the same read
 * ({@link CLAIM_READ_MS}). Past the runner's bound only the earlier owners' claims are lost
 * (records redone, never skipped); librdkafka's own lookup can leave a partition assigned
 * and never fetched (see the callback), so the start positions are waited for longer. An
 * answer between the two bounds is still where the partition starts: its committed offset.
 * @internal
 */
export const START_READ_MS = 2 * CLAIM_READ_MS;

/** How long an outage probe (a metadata request) waits for a broker's answer. */
const PROBE_MS = 3_000;
/** How long close() waits for late commit outcomes and the repairs they queue. */
const CLOSE_SETTLE_MS = 2_000;

/** The internal client's metadata request (node-rdkafka `getMetadata`), the outage probe. */
interface MetadataSource {
  getMetadata(options: { timeout?: number }, cb: (err: unknown) => void): unknown;
}

const ASSIGN = -175; // librdkafka ERR__ASSIGN_PARTITIONS
const REVOKE = -174; // librdkafka ERR__REVOKE_PARTITIONS

/**
 * The {@link ConsumerClient} over one Confluent consumer, which it creates. Most users
 * call `createConfluentConsumer` (`offset-frontier/confluent`) instead.
 */
export class ConfluentClient implements ConsumerClient<ConfluentMessage> {
  #consumer: ConfluentConsumer; // replaced only by the start: a consumer connects once
  readonly #create: () => ConfluentConsumer;
  #starting: ConfluentStart<ConfluentConsumer> | undefined; // while the start waits for the cluster
  readonly #topics: ReadonlyArray<string | RegExp>;
  readonly #dlq: DeadLetterProducer | undefined;
  readonly #outcomeMs: number;
  readonly #revokeMs: number;
  #verifier: CommitVerifier | undefined;
  #outage: OutageWatch | undefined;
  #sink: ClientSink<ConfluentMessage> | undefined;
  #assignment = new Set<string>();
  /** Start positions and committed floors of the assigned partitions, from the committed read at assignment. */
  readonly #positions: ConfluentPositions;
  #eager = true; // the rebalance protocol: EAGER until librdkafka says COOPERATIVE
  #stopped = false;
  #closed = false;
  #closing = false; // close() began: commits and their repairs still settle until #closed
  #running = false;
  readonly #commits: ConfluentCommitQueue;
  readonly #ends = new ConfluentEndOffsets(() => (this.#running && !this.#closed ? this.#consumer : undefined));
  /** Produces a dead letter; present only when a dead-letter producer was given. */
  readonly deadLetter?: (message: ConfluentMessage, info: DeadLetterInfo) => Promise<void>;

  /**
   * A binding that creates its consumer from `kafka` and `config` (not connected yet).
   * @param kafka the Confluent `KafkaJS.Kafka` client
   * @param config the consumer configuration (see `ConfluentConsumerOptions.config`)
   * @param topics topics to subscribe to
   * @param options `fromBeginning`, the dead-letter producer, the commit-outcome timeout
   */
  constructor(
    kafka: ConfluentKafka,
    config: ConfluentConsumerConfig,
    topics: ReadonlyArray<string | RegExp>,
    options: {
      fromBeginning?: boolean;
      deadLetter?: ConfluentDeadLetterOptions;
      commitOutcomeTimeoutMs?: number;
      revokeTimeoutMs?: number;
    } = {},
  ) {
    if (!kafka || typeof (kafka as { consumer?: unknown }).consumer !== "function") {
      throw new InvalidArgumentError(`kafka must be a Confluent KafkaJS.Kafka client; got ${describe(kafka)}`);
    }
    if (typeof (kafka as { logger?: unknown }).logger === "function") {
      // KafkaJS's Kafka has logger(); Confluent's KafkaJS.Kafka does not (its consumers do).
      throw new InvalidArgumentError(
        'kafka is a KafkaJS client (new Kafka() from "kafkajs"), not @confluentinc/kafka-javascript\'s KafkaJS.Kafka: use offset-frontier/node (or /bun, /deno) for KafkaJS',
      );
    }
    if (!Array.isArray(topics) || topics.length === 0) {
      throw new InvalidArgumentError(`topics must be a non-empty array of names or RegExps; got ${describe(topics)}`);
    }
    for (const t of topics) {
      if ((typeof t !== "string" && !(t instanceof RegExp)) || t === "") {
        throw new InvalidArgumentError(`topics must hold topic names (non-empty strings) or RegExps; got ${describe(t)}`);
      }
    }
    const ms = options.commitOutcomeTimeoutMs ?? 60_000;
    if (typeof ms !== "number" || !(ms > 0)) {
      throw new InvalidArgumentError(`commitOutcomeTimeoutMs must be a number > 0; got ${describe(ms)}`);
    }
    this.#outcomeMs = ms;
    const revokeMs = options.revokeTimeoutMs ?? 10_000;
    if (typeof revokeMs !== "number" || !(revokeMs >= 0)) {
      throw new InvalidArgumentError(`revokeTimeoutMs must be a number ≥ 0; got ${describe(revokeMs)}`);
    }
    this.#revokeMs = revokeMs;
    this.#topics = topics;
    const final = consumerConfig(config, options.fromBeginning, (err, assignment, fns) => this.#rebalance(err, assignment, fns));
    this.#positions = new ConfluentPositions({
      reset: resetPolicy(final),
      assigned: (key) => this.#assignment.has(key),
      closed: () => this.#closed,
      stopped: () => this.#closed || this.#stopped,
      resume: (partitions) => this.resume(partitions),
    });
    this.#commits = new ConfluentCommitQueue({
      running: () => !this.#closed && this.#running,
      assigned: (key) => this.#assignment.has(key),
      verifier: () => this.#verifier,
      send: (list) => this.#consumer.commitOffsets([...list]),
      readBack: (partitions) => this.#consumer.committed([...partitions], 5_000),
      acknowledged: () => this.#outage?.alive(), // the coordinator acknowledged
    });
    this.#create = () => kafka.consumer(final as never); // see ConfluentKafka.consumer
    this.#consumer = this.#create();
    if (options.deadLetter) {
      const dlq = new DeadLetterProducer(options.deadLetter);
      this.#dlq = dlq;
      this.deadLetter = (message, info) => dlq.produce(message, info);
    }
  }

  /** Partitions of the current assignment. */
  assignment(): TopicPartition[] {
    return [...this.#assignment].map((k) => {
      const i = k.lastIndexOf("\u0000");
      return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
    });
  }

  async start(sink: ClientSink<ConfluentMessage>): Promise<void> {
    this.#sink = sink;
    // Waits out an unreachable cluster (a fresh consumer per attempt); refusals reject.
    const starting = new ConfluentStart({
      first: this.#consumer,
      create: this.#create,
      internal: (consumer) => (consumer as unknown as { _getInternalClient?: () => ProbedClient | undefined })._getInternalClient?.(),
      ...(this.#dlq ? { producer: this.#dlq } : {}),
      sink,
      topics: this.#topics.filter((t): t is string => typeof t === "string"),
      probeMs: PROBE_MS,
    });
    this.#starting = starting;
    if (this.#closed) starting.close();
    const connected = await starting.connect();
    if (!connected) return; // stopped while waiting: close() (or the start) disconnects what an attempt left connecting
    this.#starting = undefined;
    this.#consumer = connected;
    if (this.#closed) {
      // close() came as it connected (it left the disconnect to the start)
      await Promise.allSettled([connected.disconnect(), this.#dlq?.disconnect()]);
      return;
    }
    const c = connected;
    try {
      const internal = (c as unknown as { _getInternalClient?: () => CommitEventSource & ErrorEventSource & MetadataSource & CommittedSource })
        ._getInternalClient?.();
      if (!internal || typeof internal.on !== "function" || typeof internal.getMetadata !== "function" || typeof internal.committed !== "function") {
        throw new InvalidArgumentError("the Confluent consumer exposes no internal client: @confluentinc/kafka-javascript 1.x is required");
      }
      this.#verifier = new CommitVerifier(internal, this.#outcomeMs, (partitions) => this.#commits.repair(partitions));
      this.#positions.attach(internal);
      // A metadata request answers whether any broker is reachable (no poll needed).
      this.#outage = new OutageWatch(internal, sink, () =>
        new Promise<void>((resolve, reject) => internal.getMetadata({ timeout: PROBE_MS }, (err) => (err ? reject(err) : resolve()))));
      await c.subscribe({ topics: [...this.#topics] });
    } catch (error) {
      this.#verifier?.close();
      this.#outage?.close();
      await Promise.allSettled([this.#dlq?.disconnect(), c.disconnect()]);
      throw error;
    }
    this.#running = true;
    await c.run({
      eachBatchAutoResolve: false,
      eachBatch: ({ batch, resolveOffset }) => {
        const messages = batch.messages;
        const n = messages.length;
        if (n === 0) return Promise.resolve();
        const offsets = batchOffsets(messages);
        const last = batch.lastOffset();
        const key = tpKey(batch.topic, batch.partition);
        // Records below the committed offset read at this assignment are covered by an
        // acknowledged commit: never run them again. The client can start a partition it
        // owned before at a stale position (its pause seeks back to the last offset it
        // consumed in an earlier assignment, and seeks queued for a partition it did not
        // own are applied when it is assigned again).
        const floor = this.#positions.floor(key);
        let from = 0;
        if (floor !== undefined) while (from < n && offsets[from] < floor) from++;
        if (from === n) {
          resolveOffset(last); // all of it committed: move on
          this.#positions.took(key);
          return Promise.resolve();
        }
        const taken = sink.deliver({
          topic: batch.topic,
          partition: batch.partition,
          messages: from === 0 ? messages : messages.slice(from),
          offsets: from === 0 ? offsets : offsets.subarray(from),
          next: Number(last) + 1,
          endOffset: endOffsetOf(batch.highWatermark),
        });
        // Moves only the fetch position (auto-commit is off). Not resolved: the client seeks back and delivers it again.
        if (taken) {
          resolveOffset(last);
          this.#positions.took(key);
        }
        return Promise.resolve();
      },
    });
  }

  pause(partitions: readonly TopicPartition[]): void {
    if (this.#closed || partitions.length === 0) return;
    this.#positions.paused(partitions);
    try {
      this.#consumer.pause(groupByTopic(partitions));
    } catch {
      // not connected: nothing is fetched anyway
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    if (this.#closed || this.#stopped || partitions.length === 0) return;
    // Partitions whose start is not known stay paused until it is read (see ConfluentPositions.resume).
    const { now, seeks } = this.#positions.resume(partitions);
    if (now.length === 0) return;
    try {
      this.#consumer.resume(groupByTopic(now));
      for (const s of seeks) this.#consumer.seek(s);
    } catch {
      // not connected
    }
  }

  commit(offsets: readonly CommitOffset[]): Promise<void> {
    return this.#commits.commit(offsets);
  }

  /** Paused partitions' log end offsets (the consumer's dependent admin), for the lag in `metrics()`. */
  endOffsets(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]> {
    return this.#ends.query(partitions);
  }

  stopFetching(): void {
    this.#stopped = true;
    this.pause(this.assignment());
  }

  async close(): Promise<void> {
    if (this.#closed || this.#closing) return;
    this.#closing = true;
    if (this.#starting) {
      this.#closed = true;
      // Still waiting for the cluster: a pending attempt is disconnected once it settles (in the background).
      this.#starting.close();
      return;
    }
    // A commit settled before librdkafka reported its outcome may still land after a newer
    // one and move its partition back; the outcome then queues a repair. Leave the group only
    // once those outcomes came and their repairs ran (the consumer still polls), within
    // CLOSE_SETTLE_MS: a repair skipped here left a cleanly stopped consumer's committed
    // offset behind what it had acknowledged (the next owner redid the difference).
    const until = Date.now() + CLOSE_SETTLE_MS;
    await this.#verifier?.outcomes(CLOSE_SETTLE_MS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#commits.settled, new Promise<void>((resolve) => timer = setTimeout(resolve, Math.max(0, until - Date.now())))]);
    clearTimeout(timer);
    this.#closed = true;
    await this.#ends.close();
    try {
      await this.#consumer.disconnect(); // its final revoke is ignored: the runner committed already
    } finally {
      this.#running = false;
      this.#verifier?.close();
      this.#outage?.close();
      if (this.#dlq) await this.#dlq.disconnect();
    }
  }

  recordSignal(signal: AbortSignal): void {
    unlimitedListeners(signal);
  }

  keyOf(message: ConfluentMessage): string | undefined {
    const key = message.key;
    return key == null ? undefined : key.toString("latin1"); // one char per byte: distinct keys stay distinct
  }

  keyHashOf(message: ConfluentMessage): number | undefined {
    return keyBytesHash(message.key); // over the bytes: no string per record
  }

  /**
   * The client's rebalance callback, awaited by the client before it applies the change. An
   * assignment it answers with start positions (see below) is the one the client applies.
   */
  async #rebalance(
    err: ConfluentRebalanceError,
    assignment: ConfluentTopicPartition[],
    fns: ConfluentAssignmentFns,
  ): Promise<ConfluentStartingPartition[] | undefined> {
    if (this.#closed || !this.#sink) return undefined; // the close's own revoke: the runner already committed
    const internal = (this.#consumer as unknown as { _getInternalClient?: () => { rebalanceProtocol?: () => string } })._getInternalClient?.();
    const protocol = internal?.rebalanceProtocol?.();
    if (protocol === "COOPERATIVE") this.#eager = false;
    else if (protocol === "EAGER") this.#eager = true;
    const partitions: TopicPartition[] = assignment.map((p) => ({ topic: p.topic, partition: p.partition }));
    if (err.code === ASSIGN) {
      this.#outage?.alive(); // the group coordinator answered
      const added = partitions.filter((p) => !this.#assignment.has(tpKey(p.topic, p.partition)));
      if (this.#eager) this.#assignment = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
      else for (const p of added) this.#assignment.add(tpKey(p.topic, p.partition));
      const fresh = this.#eager ? partitions : added;
      for (const p of fresh) this.#commits.forget(tpKey(p.topic, p.partition));
      this.#positions.assigned(fresh);
      // Stale pauses of partitions new to this assignment go; the runner pauses anew what it
      // needs. No seek: a fresh partition starts at its committed offset (or the reset
      // policy), and a seek queued now to a guessed start (earliest) could land after the
      // client's own positioning and redo committed records.
      if (fresh.length > 0 && !this.#closed) {
        try {
          this.#consumer.resume(groupByTopic(fresh));
        } catch {
          // not connected
        }
      }
      const committed = fresh.length > 0 && !this.#stopped ? this.#positions.committed(fresh) : undefined;
      this.#sink.assigned(fresh, committed, !this.#eager);
      if (this.#stopped) this.pause(fresh);
      if (committed === undefined) return undefined;
      // The new partitions start where that read says: librdkafka is handed their offsets and
      // starts fetching them at once. Left to look them up itself, it never starts a partition
      // whose lookup failed (an OffsetFetch error, e.g. an unknown member under KIP-848, or a
      // connection lost after the assignment changed): the partition stays assigned, never
      // fetched, every seek of it fails with "Local: Erroneous state", and the group stalls on
      // it. A read that does not answer within START_READ_MS leaves the lookup to librdkafka.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const read = await Promise.race([
        committed.then(() => true, () => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), START_READ_MS))),
      ]);
      clearTimeout(timer);
      if (!read || this.#closed) return undefined;
      return this.#positions.withStarts(assignment, new Set(fresh.map((p) => tpKey(p.topic, p.partition))));
    } else if (err.code === REVOKE) {
      if (fns.assignmentLost()) {
        this.#sink.lost(partitions);
      } else {
        // Awaited by the client: the partitions leave only after the drain and its commit (bounded).
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          this.#sink.revoking(partitions).catch(() => {}),
          new Promise<void>((r) => (timer = setTimeout(r, this.#revokeMs))),
        ]);
        clearTimeout(timer);
      }
      for (const p of partitions) {
        this.#assignment.delete(tpKey(p.topic, p.partition));
        this.#commits.forget(tpKey(p.topic, p.partition));
      }
    } else {
      // A rebalance error: the client unassigns; whatever was assigned is no longer ours.
      this.#sink.lost(partitions.length > 0 ? partitions : undefined);
      this.#assignment = new Set();
      this.#commits.forgetAll();
    }
    return undefined;
  }
}

