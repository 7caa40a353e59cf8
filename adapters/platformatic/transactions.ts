/**
 * The `@platformatic/kafka` (2.12) plumbing of the exactly-once mode: one transactional
 * producer per assigned input partition, `transactionalId = <prefix>-<topic>-<partition>`
 * (the ids the KafkaJS binding uses, so a group moving between the two bindings fences
 * across them).
 *
 * Fencing, twice over:
 * - the transactional id: the new owner's InitProducerId (the first `beginTransaction` of a
 *   new producer, sent with producer id -1 and epoch -1: the client's default of 0 and 0 is
 *   refused with PRODUCER_FENCED once the id has a producer) aborts whatever the old owner
 *   left open, or waits until a commit it had begun completes, and bumps the epoch, so every
 *   later request of the old owner's producer fails (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH);
 * - the group generation (KIP-447): the offsets go in a TxnOffsetCommit that carries this
 *   member's id and the generation of the current assignment (transaction_steps.ts), which
 *   the coordinator refuses once the member is no longer in it (ILLEGAL_GENERATION,
 *   UNKNOWN_MEMBER_ID). Nothing is sent between assignments.
 * The committed offsets are read only after the fencing, with require-stable (a pending
 * transactional commit is waited out), so they are stable; then the binding's fetch
 * positions seek back to them.
 *
 * As with KafkaJS, producers are made when a partition is assigned (every assignment fences
 * anew) and at a reset after a failed, timed-out or fenced transaction (the runner asks for
 * it only once this member is known to still own the partition: an answered heartbeat sent
 * after the failure, or a new assignment); a revoked or lost partition's producer is closed.
 * A producer whose transaction failed never begins another: the client keeps a transaction
 * that failed in place, and after INVALID_PRODUCER_EPOCH it forgets its producer id, so its
 * next `beginTransaction` would send InitProducerId again.
 *
 * Outcomes: `fenced` whenever the broker said so (also just after the transaction's
 * timeout); `aborted` otherwise.
 *
 * @module
 */
import { kOptions, Producer } from "@platformatic/kafka";
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import type {
  OpenPartition,
  PartitionTransaction,
  TransactionalOptions,
  TransactionalPort,
  TransactionOutcome,
} from "../../core/consumer/port/mod.ts";
import { describe, InvalidArgumentError } from "../../core/errors.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import { REQUEST_BYTES, sizeOf, timeout } from "../shared/transaction_bounds.ts";
import { PartitionProducers, type ProducerStats } from "../shared/partition_producers.ts";
import { readCommitted } from "./group_requests.ts";
import { isFenced, type Membership, type ProducedMessage, sendTxnOffsets, StaleGenerationError, toPlatformaticMessage } from "./transaction_steps.ts";
import type { ClientConsumer, ClientProducer } from "./types.ts";

/** The exactly-once mode's options of the `@platformatic/kafka` binding. */
export interface PlatformaticTransactionalOptions extends TransactionalOptions {
  /** Prefix of the transactional ids, `<prefix>-<topic>-<partition>`. Default: the group id. Must be the same on every member. */
  idPrefix?: string;
  /**
   * The broker's timeout of a transaction (the producers' `timeout`, which the client sends
   * as InitProducerId's transaction timeout and also uses as its request timeout): an open
   * transaction of a member that died and whose partition nobody took over is aborted after
   * it. Default 60,000 ms.
   */
  transactionTimeoutMs?: number;
  /**
   * `"partition"` (the default and the only model): one transactional producer per assigned
   * partition, fenced by its transactional id and by the group generation. `"member"` (one
   * producer per member, KIP-447) is refused with an `InvalidArgumentError`: it lost outputs
   * in a chaos round and was removed (docs/exactly-once.md).
   */
  producers?: "partition";
}

/**
 * Checks the binding's transactional options (the runner checks `timeoutMs`).
 * @throws {InvalidArgumentError} naming the option and the value
 */
export function checkTransactionalOptions(options: PlatformaticTransactionalOptions): void {
  const v = options.idPrefix;
  if (v !== undefined && (typeof v !== "string" || v.length === 0 || /\s/.test(v))) {
    throw new InvalidArgumentError(`transactional.idPrefix must be a non-empty string without spaces; got ${describe(v)}`);
  }
  const tt = options.transactionTimeoutMs;
  if (tt !== undefined && (!Number.isSafeInteger(tt) || tt < 1)) {
    throw new InvalidArgumentError(`transactional.transactionTimeoutMs must be an integer ≥ 1; got ${describe(tt)}`);
  }
  const pr: unknown = options.producers;
  if (pr === "member") {
    throw new InvalidArgumentError(
      'transactional.producers "member" (one producer per member) is not supported: it committed input offsets without their outputs in a chaos round and was removed (docs/exactly-once.md); use "partition" (the default)',
    );
  }
  if (pr !== undefined && pr !== "partition") {
    throw new InvalidArgumentError(`transactional.producers must be "partition"; got ${describe(pr)}`);
  }
}

/** What the producers per partition cost so far. */
export type PlatformaticProducerStats = ProducerStats;

/** What {@link PlatformaticTransactions} reads and drives of the binding. */
export interface PlatformaticTransactionInputs {
  /** The binding's consumer (group, coordinator connection, connection options of the producers). */
  readonly consumer: ClientConsumer;
  /** The generation of the current assignment and this member's id, `undefined` between assignments. */
  readonly membership: () => Membership | undefined;
  /** Seeks the fetch positions of partitions of the current assignment (by `tpKey`); `unknownOnly`: only where none is known yet. */
  readonly seek: (positions: ReadonlyMap<string, number>, unknownOnly: boolean) => void;
  /** No committed offset and no fallback: start at the earliest offset (else the latest). */
  readonly fromBeginning: boolean;
  /** The dead letter of a record, as an output of its transaction. */
  readonly deadLetter?: TransactionalPort["deadLetter"];
  /** Closed with the producers (a dead-letter producer given but not used in this mode). */
  readonly alsoClose?: { close(): Promise<unknown> };
  /** An open that failed and will be tried again (diagnostics: the port retries until the partitions end). */
  readonly openFailed?: (error: unknown, partitions: readonly TopicPartition[]) => void;
}

/** The connection options of the consumer that its producers share. */
const CONNECTION_OPTIONS = ["bootstrapBrokers", "sasl", "tls", "ssl", "tlsServerName", "connectTimeout", "metadataMaxAge", "clientRack", "context"] as const;

/**
 * The fetch positions come back to what the broker holds (a reset redoes from there): the
 * committed offset, else where the reset tracker began, else (a fresh partition) the
 * earliest or latest offset.
 */
async function seekBack(inputs: PlatformaticTransactionInputs, partitions: readonly OpenPartition[], committed: readonly CommittedPosition[]): Promise<void> {
  const at = new Map(committed.map((p) => [tpKey(p.topic, p.partition), p.offset]));
  const known = new Map<string, number>();
  const missing = new Map<string, number[]>();
  for (const p of partitions) {
    const key = tpKey(p.topic, p.partition);
    const offset = at.get(key) ?? p.fallback;
    if (offset !== undefined) known.set(key, offset);
    else missing.set(p.topic, [...(missing.get(p.topic) ?? []), p.partition]);
  }
  const ends = new Map<string, number>();
  if (missing.size > 0) {
    const answer = await inputs.consumer.listOffsets({
      topics: [...missing.keys()],
      partitions: Object.fromEntries(missing),
      timestamp: inputs.fromBeginning ? -2n : -1n,
      isolationLevel: 1,
    });
    for (const [topic, ps] of missing) {
      for (const partition of ps) {
        const o = Number(answer.get(topic)?.[partition]);
        if (!Number.isSafeInteger(o) || o < 0) throw new Error(`no start offset for ${topic}/${partition}`);
        ends.set(tpKey(topic, partition), o);
      }
    }
  }
  inputs.seek(known, false);
  // Nothing committed and nothing delivered before: a position the fetcher already has stays.
  if (ends.size > 0) inputs.seek(ends, true);
}

/** The connection options of the consumer (`consumer[kOptions]`) that its producers share. */
function connectionOptions(from: Record<string, unknown>): Record<string, unknown> & { bootstrapBrokers: string[] } {
  const connection: Record<string, unknown> = {};
  for (const name of CONNECTION_OPTIONS) if (from[name] !== undefined) connection[name] = from[name];
  return { ...connection, bootstrapBrokers: (from.bootstrapBrokers ?? []) as string[] };
}

/**
 * The {@link TransactionalPort} over `@platformatic/kafka`. Made by
 * `createPlatformaticConsumer` from its `transactional` option; exposed for its {@link stats}.
 */
export class PlatformaticTransactions implements TransactionalPort {
  readonly #in: PlatformaticTransactionInputs;
  readonly #options: PlatformaticTransactionalOptions;
  readonly #producers: PartitionProducers<ClientProducer>;
  /** The dead letter of a record (set when dead letters are configured). */
  readonly deadLetter?: TransactionalPort["deadLetter"];

  /**
   * The transactional plumbing of one consumer.
   * @param inputs the binding's consumer, membership and seek
   * @param options transactional options
   */
  constructor(inputs: PlatformaticTransactionInputs, options: PlatformaticTransactionalOptions = {}) {
    checkTransactionalOptions(options);
    this.#in = inputs;
    this.#options = options;
    if (inputs.deadLetter) this.deadLetter = inputs.deadLetter;
    this.#producers = new PartitionProducers<ClientProducer>({
      make: (topic, partition) => this.#producer(topic, partition),
      init: async (producer) => {
        // The first transaction sends InitProducerId (with -1/-1: take the id over, whoever held
        // it); nothing is added, so it is only forgotten locally.
        const t = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 });
        await t.cancel();
      },
      close: (producer) => producer.close().catch(() => producer.close(true).catch(() => {})),
    });
  }

  /** What the producers cost so far. */
  stats(): PlatformaticProducerStats {
    return this.#producers.stats();
  }

  /** The transactional id of a partition's producer. */
  transactionalId(topic: string, partition: number): string {
    return `${this.#options.idPrefix ?? this.#in.consumer.groupId}-${topic}-${partition}`;
  }

  open(partitions: readonly OpenPartition[], signal: AbortSignal): Promise<readonly CommittedPosition[]> {
    return this.#producers.open(partitions, signal, async (ps, stillOpen) => {
      // Require-stable: a transaction of the old owner still pending is waited out (retried).
      const positions = await readCommitted(this.#in.consumer, ps);
      stillOpen();
      await seekBack(this.#in, ps, positions);
      stillOpen();
      return positions;
    }, (error, ps) => this.#in.openFailed?.(error, ps));
  }

  /** A new transactional producer for the partition (connection options from the consumer). */
  #producer(topic: string, partition: number): ClientProducer {
    const from = this.#in.consumer[kOptions] as unknown as Record<string, unknown>;
    return new Producer({
      ...connectionOptions(from),
      clientId: `${this.#in.consumer.clientId}-tx-${partition}`,
      idempotent: true,
      transactionalId: this.transactionalId(topic, partition),
      timeout: this.#options.transactionTimeoutMs ?? 60_000,
      // CONCURRENT_TRANSACTIONS answers a transaction begun while the previous one's markers
      // are still being written: retry soon (the client's default waits 1 s each time).
      retries: 10,
      retryDelay: (_client: unknown, _op: string, attempt: number) => Math.min(1_000, 10 * 2 ** attempt),
    }) as unknown as ClientProducer;
  }

  commit(transactions: readonly PartitionTransaction[], timeoutMs: number): Promise<readonly TransactionOutcome[]> {
    // The generation of the assignment the proposal was made in (the runner calls this in
    // that tick): a transaction that reaches its offsets after a rebalance is refused.
    const membership = this.#in.membership();
    return Promise.all(transactions.map((t) => this.#one(t, timeoutMs, membership)));
  }

  #one(t: PartitionTransaction, timeoutMs: number, membership: Membership | undefined): Promise<TransactionOutcome> {
    return this.#producers.run(t, timeoutMs, isFenced, async (producer, failed) => {
      const txn = await producer.beginTransaction();
      try {
        // Requests of at most ~REQUEST_BYTES: one record batch per output partition must stay
        // under the broker's message.max.bytes (1 MiB by default).
        for (let i = 0; i < t.outputs.length;) {
          const messages: ProducedMessage[] = [];
          let bytes = 0;
          for (; i < t.outputs.length && (bytes < REQUEST_BYTES || messages.length === 0); i++) {
            bytes += sizeOf(t.outputs[i]);
            messages.push(toPlatformaticMessage(t.outputs[i]));
          }
          await txn.send({ messages });
        }
        await txn.addConsumer(this.#in.consumer); // AddOffsetsToTxn for the group
        if (membership === undefined) throw new StaleGenerationError(`the offsets of ${t.topic}/${t.partition}`);
        await sendTxnOffsets(this.#in.consumer, producer, membership, [t]);
        await txn.commit();
      } catch (error) {
        failed(error);
        // Best effort: a fenced producer cannot abort; the next owner's (or our reset's) InitProducerId does.
        // The tail (the next transaction's start) waits for this abort to settle, within its bound.
        if (producer.transaction === txn && !txn.completed) await timeout(txn.abort(), timeoutMs, "the abort").catch(() => {});
        throw error;
      }
    });
  }

  release(partitions: readonly TopicPartition[]): Promise<void> {
    return this.#producers.release(partitions);
  }

  async close(): Promise<void> {
    await Promise.all([this.#producers.close(), this.#in.alsoClose?.close().catch(() => {})]);
  }
}
