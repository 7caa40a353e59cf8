/**
 * The KafkaJS (2.2.x) plumbing of the exactly-once mode: one transactional producer per
 * assigned input partition, `transactional.id = <prefix>-<topic>-<partition>`.
 *
 * Why one per partition: KafkaJS sends TxnOffsetCommit without the group generation (no
 * KIP-447), so the broker cannot tell a zombie's offsets from the owner's. Fencing comes
 * from the transactional id instead: the new owner's InitProducerId (sent when it opens
 * the partition) aborts whatever the old owner left open, or waits until a commit it had
 * begun completes, and bumps the epoch, so every later request of the old owner's producer
 * fails (INVALID_PRODUCER_EPOCH / PRODUCER_FENCED). The committed offsets are read only
 * after that, so they are stable; then fetching seeks back to them.
 *
 * Cost, bounded: producers are made lazily, when a partition is assigned, and live while
 * it stays assigned; a revoked or lost partition's producer is disconnected. KafkaJS binds
 * the transactional id to the producer object and sends InitProducerId once per object, so
 * fencing anew — at every assignment (a member that owned the partition in between may hold
 * a newer epoch: KafkaJS does not report the generation, so a kept partition cannot be told
 * apart) and at a reset after a failed, timed-out or fenced transaction — means a new
 * producer; its InitProducerId also settles the uncertain transaction. The runner asks for
 * a reset's producer only once this member is known to still own the partition (an
 * answered heartbeat sent after the failure, or a new assignment): a woken zombie's would
 * fence the rightful owner. Each producer holds its own connections (one per broker it
 * talks to).
 *
 * Outcomes: `fenced` whenever the broker said so (INVALID_PRODUCER_EPOCH / PRODUCER_FENCED,
 * also under KafkaJS's retry wrapper, and also when the answer comes just after the
 * transaction's timeout, as for a process stopped past it); `aborted` otherwise. A producer
 * whose transaction failed never begins another: KafkaJS leaves a producer whose abort was
 * refused in state ABORTING, where `beginTransaction` throws.
 *
 * @module
 */
import type { Admin, Consumer, Kafka, Message, Producer } from "kafkajs";
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import { PartitionProducers, type ProducerStats } from "../shared/partition_producers.ts";
import { toStored } from "../shared/stored_metadata.ts";
import { readCommitted } from "./committed.ts";
import type {
  OpenPartition,
  PartitionTransaction,
  TransactionalOptions,
  TransactionalPort,
  TransactionOutcome,
} from "../../core/consumer/port/mod.ts";
import { InvalidArgumentError, describe } from "../../core/errors.ts";
import { isFenced, REQUEST_BYTES, sizeOf, timeout, toKafkaJSMessage } from "./transaction_steps.ts";

/** The exactly-once mode's options of the KafkaJS binding. */
export interface KafkaJSTransactionalOptions extends TransactionalOptions {
  /** The consumer's group id (offsets are committed to it). Default: read from KafkaJS's `GROUP_JOIN` event. */
  groupId?: string;
  /** Prefix of the transactional ids, `<prefix>-<topic>-<partition>`. Default: the group id. Must be the same on every member. */
  idPrefix?: string;
  /**
   * The broker's timeout of a transaction (`transaction.timeout.ms`): an open transaction
   * of a member that died and whose partition nobody took over is aborted after it (until
   * then `read_committed` readers of the output partitions wait). Default 60,000 ms.
   */
  transactionTimeoutMs?: number;
  /**
   * The producers' KafkaJS retry settings. Default `{ retries: 10, initialRetryTime: 10,
   * maxRetryTime: 1_000 }`: the broker answers CONCURRENT_TRANSACTIONS to a transaction
   * begun while the previous one's markers are still being written, and KafkaJS's own
   * 300 ms first backoff would then cost every cycle that much. A transaction is bounded
   * by `timeoutMs` whatever they say.
   */
  retry?: { retries?: number; initialRetryTime?: number; maxRetryTime?: number };
}

/** What the producers per partition cost so far. */
export type TransactionalProducerStats = ProducerStats;

/**
 * The {@link TransactionalPort} over KafkaJS. Made by `createKafkaJSConsumer` from its
 * `transactional` option; exposed for its {@link stats}.
 */
export class KafkaJSTransactions implements TransactionalPort {
  readonly #kafka: Kafka;
  readonly #consumer: Consumer;
  readonly #options: KafkaJSTransactionalOptions;
  readonly #fromBeginning: boolean;
  readonly #producers: PartitionProducers<Producer>;
  #groupId: string | undefined;
  #admin: Promise<Admin> | undefined;
  /** The dead letter of a record (set by the binding when dead letters are configured). */
  readonly deadLetter?: TransactionalPort["deadLetter"];

  /**
   * The transactional plumbing of one consumer.
   * @param kafka the KafkaJS client (makes the producers and an admin client)
   * @param consumer the KafkaJS consumer (seeks; its `GROUP_JOIN` names the group)
   * @param options transactional options
   * @param more `fromBeginning` of the subscription, the dead-letter record builder
   */
  constructor(
    kafka: Kafka,
    consumer: Consumer,
    options: KafkaJSTransactionalOptions = {},
    more: { fromBeginning?: boolean; deadLetter?: TransactionalPort["deadLetter"] } = {},
  ) {
    if (!kafka || typeof (kafka as { producer?: unknown }).producer !== "function") {
      throw new InvalidArgumentError(`transactional mode needs kafka, the KafkaJS client (new Kafka(…)); got ${describe(kafka)}`);
    }
    for (const name of ["groupId", "idPrefix"] as const) {
      const v = options[name];
      if (v !== undefined && (typeof v !== "string" || v.length === 0)) {
        throw new InvalidArgumentError(`transactional.${name} must be a non-empty string; got ${describe(v)}`);
      }
    }
    const tt = options.transactionTimeoutMs;
    if (tt !== undefined && (!Number.isSafeInteger(tt) || tt < 1)) {
      throw new InvalidArgumentError(`transactional.transactionTimeoutMs must be an integer ≥ 1; got ${describe(tt)}`);
    }
    this.#kafka = kafka;
    this.#consumer = consumer;
    this.#options = options;
    this.#fromBeginning = more.fromBeginning ?? false;
    this.#groupId = options.groupId;
    if (more.deadLetter) this.deadLetter = more.deadLetter;
    this.#producers = new PartitionProducers<Producer>({
      make: (topic, partition) =>
        kafka.producer({
          retry: options.retry ?? { retries: 10, initialRetryTime: 10, maxRetryTime: 1_000 },
          transactionalId: this.transactionalId(topic, partition),
          idempotent: true,
          maxInFlightRequests: 1,
          transactionTimeout: options.transactionTimeoutMs ?? 60_000,
        }),
      init: async (producer) => {
        await producer.connect();
        // KafkaJS sends InitProducerId at the first transaction(); nothing is added, so the abort sends nothing.
        const t = await producer.transaction();
        await t.abort();
      },
      close: (producer) => producer.disconnect().catch(() => {}),
    });
    // Registered before the binding's own GROUP_JOIN listener: the group id is known when the runner opens partitions.
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      this.#groupId ??= e.payload.groupId;
    });
  }

  /** What the producers cost so far. */
  stats(): TransactionalProducerStats {
    return this.#producers.stats();
  }

  /** The transactional id of a partition's producer. */
  transactionalId(topic: string, partition: number): string {
    return `${this.#options.idPrefix ?? this.#group()}-${topic}-${partition}`;
  }

  #group(): string {
    if (this.#groupId === undefined) throw new Error("the group id is not known yet (no GROUP_JOIN): pass transactional.groupId");
    return this.#groupId;
  }

  open(partitions: readonly OpenPartition[], signal: AbortSignal): Promise<readonly CommittedPosition[]> {
    return this.#producers.open(partitions, signal, async (ps, stillOpen) => {
      const positions = await this.#committed(ps);
      stillOpen();
      const at = new Map(positions.map((p) => [tpKey(p.topic, p.partition), p.offset]));
      for (const p of ps) {
        const committed = at.get(tpKey(p.topic, p.partition));
        const offset = committed ?? p.fallback ?? (this.#fromBeginning && !p.kept ? -2 : undefined);
        // The fetch position comes back to what the broker holds (a reset redoes from there).
        if (offset !== undefined) this.#consumer.seek({ topic: p.topic, partition: p.partition, offset: String(offset) });
      }
      return positions;
    });
  }

  async #committed(partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
    this.#admin ??= (async () => {
      const admin = this.#kafka.admin();
      await admin.connect();
      return admin;
    })();
    let admin: Admin;
    try {
      admin = await this.#admin;
    } catch (error) {
      this.#admin = undefined;
      throw error;
    }
    const topics = [...new Set(partitions.map((p) => p.topic))];
    const want = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    return await readCommitted(admin, this.#group(), topics, (topic, partition) => want.has(tpKey(topic, partition)));
  }

  commit(transactions: readonly PartitionTransaction[], timeoutMs: number): Promise<readonly TransactionOutcome[]> {
    return Promise.all(transactions.map((t) => this.#one(t, timeoutMs)));
  }

  #one(t: PartitionTransaction, timeoutMs: number): Promise<TransactionOutcome> {
    return this.#producers.run(t, timeoutMs, isFenced, async (producer, failed) => {
      const txn = await producer.transaction();
      try {
        // Requests of at most ~REQUEST_BYTES: one record batch per output partition must stay
        // under the broker's message.max.bytes (1 MiB by default), and KafkaJS encodes a
        // request whole before sending it.
        for (let i = 0; i < t.outputs.length;) {
          const byTopic = new Map<string, Message[]>();
          let bytes = 0;
          for (; i < t.outputs.length && (bytes < REQUEST_BYTES || byTopic.size === 0); i++) {
            const r = t.outputs[i];
            bytes += sizeOf(r);
            const list = byTopic.get(r.topic);
            if (list) list.push(toKafkaJSMessage(r));
            else byTopic.set(r.topic, [toKafkaJSMessage(r)]);
          }
          await txn.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
        }
        await txn.sendOffsets({
          consumerGroupId: this.#group(),
          topics: [{
            topic: t.topic,
            partitions: [{ partition: t.partition, offset: String(t.offset), ...(t.metadata !== undefined ? { metadata: toStored(t.metadata) } : {}) }],
          }],
        });
        await txn.commit();
      } catch (error) {
        // An abort the broker refuses (fenced) leaves KafkaJS's state ABORTING for good, where beginTransaction throws.
        failed(error);
        // Best effort: a fenced or broken producer cannot abort; the next owner's (or our reset's) InitProducerId does.
        // The tail (the next transaction's start) waits for this abort to settle, within its bound.
        if (txn.isActive()) await timeout(txn.abort(), timeoutMs, "the abort").catch(() => {});
        throw error;
      }
    });
  }

  release(partitions: readonly TopicPartition[]): Promise<void> {
    return this.#producers.release(partitions);
  }

  async close(): Promise<void> {
    await this.#producers.close();
    const admin = this.#admin;
    this.#admin = undefined;
    if (admin) await admin.then((a) => a.disconnect()).catch(() => {});
  }
}
