/**
 * The `@platformatic/kafka` exactly-once plumbing with one transactional producer per
 * member (`transactional: { producers: "member" }`), fenced by the group generation alone
 * (KIP-447), instead of one per assigned partition (transactions.ts, the default).
 *
 * NOT AVAILABLE YET: `createPlatformaticConsumer` refuses it. Its real-broker tests pass
 * (test/kafka/platformatic_transactions.test.ts), but of four chaos rounds through it
 * (`CHAOS_EOS_PRODUCERS=member npm run chaos -- --client platformatic --mode exactly-once`)
 * one on Deno committed 69 input offsets without their outputs (seed 312191635) and another
 * (same seed) left every output partition behind an open transaction and two input
 * partitions held for 180 s; not traced yet. The per-partition model passed the same rounds.
 *
 * Each commit cycle is one Kafka transaction for every partition in it: the outputs, then
 * one TxnOffsetCommit with every partition's offset and completed set under the generation
 * and member id of the current assignment, then the commit. What keeps it exact:
 * - a member that is no longer in the generation (a zombie) cannot add offsets: the group
 *   coordinator refuses its TxnOffsetCommit (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID), and the
 *   binding then aborts the transaction, so its outputs never become visible;
 * - a transaction whose offsets were accepted while the member still was in the generation
 *   ends as a whole, and until it does the new owner's read of the committed offsets
 *   (OffsetFetch with require-stable) is answered UNSTABLE_OFFSET_COMMIT and tried again: it
 *   reads the offsets only once they are final.
 * The transactional id is `<prefix>-<clientId>-<instance>`, `instance` random per port: no
 * other member ever uses it, so making a new producer for it (after a failed or timed-out
 * transaction: its InitProducerId aborts or waits out the uncertain one) fences nobody but
 * this member's own earlier producer, and opening a partition needs no producer at all.
 *
 * The cost, the other way round: a transaction of a member that died (SIGKILL, a crash)
 * after its offsets were accepted holds its partitions' new owners in the require-stable read
 * until the broker aborts it after `transactionTimeoutMs` (no other producer has its id); and
 * one refused partition (an output over the broker's limit) fails the cycle of every
 * partition in the transaction (all are reset and redone).
 *
 * @module
 */
import { kOptions, Producer } from "@platformatic/kafka";
import type { CommittedPosition, TopicPartition } from "../../core/consumer/client.ts";
import type { OpenPartition, PartitionTransaction, TransactionalPort, TransactionOutcome } from "../../core/consumer/transactions.ts";
import { REQUEST_BYTES, sizeOf, timeout, TransactionTimeoutError, VERDICT_GRACE_MS } from "../shared/transaction_bounds.ts";
import { readCommitted } from "./group_requests.ts";
import { isFenced, type Membership, type ProducedMessage, sendTxnOffsets, StaleGenerationError, toPlatformaticMessage } from "./transaction_steps.ts";
import { checkTransactionalOptions, connectionOptions, type PlatformaticProducerStats, type PlatformaticTransactionalOptions, type PlatformaticTransactionInputs, seekBack } from "./transactions.ts";
import type { ClientProducer } from "./types.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface MemberProducer {
  readonly producer: ClientProducer;
  /** Its last transaction failed or timed out (outcome unknown): replaced before the next one. */
  broken: boolean;
  /** Settles when its last transaction ended or passed its timeout. */
  quiet: Promise<void>;
}

/** The {@link TransactionalPort} over `@platformatic/kafka` with one transactional producer per member. */
export class PlatformaticMemberTransactions implements TransactionalPort {
  readonly #in: PlatformaticTransactionInputs;
  readonly #options: PlatformaticTransactionalOptions;
  readonly #id: string;
  #producer: MemberProducer | undefined;
  #making: Promise<MemberProducer> | undefined;
  #tail: Promise<void> = Promise.resolve();
  #closed = false;
  readonly #stats: PlatformaticProducerStats = { open: 0, created: 0, closed: 0, lastInitMs: undefined, maxInitMs: undefined, totalInitMs: 0 };
  /** The dead letter of a record (set when dead letters are configured). */
  readonly deadLetter?: TransactionalPort["deadLetter"];

  /**
   * The transactional plumbing of one consumer, one producer for every partition.
   * @param inputs the binding's consumer, membership and seek
   * @param options transactional options
   */
  constructor(inputs: PlatformaticTransactionInputs, options: PlatformaticTransactionalOptions = {}) {
    checkTransactionalOptions(options);
    this.#in = inputs;
    this.#options = options;
    this.#id = `${options.idPrefix ?? inputs.consumer.groupId}-${inputs.consumer.clientId}-${Math.random().toString(36).slice(2, 10)}`;
    if (inputs.deadLetter) this.deadLetter = inputs.deadLetter;
  }

  /** What the producer cost so far (`open`: 0 or 1). */
  stats(): PlatformaticProducerStats {
    return { ...this.#stats, open: this.#producer ? 1 : 0 };
  }

  /** This member's transactional id. */
  transactionalId(): string {
    return this.#id;
  }

  /** The member's producer, healthy: a broken one is replaced (its InitProducerId settles the uncertain transaction). */
  #ready(): Promise<MemberProducer> {
    const mp = this.#producer;
    if (mp && !mp.broken) return Promise.resolve(mp);
    this.#making ??= this.#make(mp).finally(() => (this.#making = undefined));
    return this.#making;
  }

  async #make(old: MemberProducer | undefined): Promise<MemberProducer> {
    if (old) {
      await old.quiet;
      this.#producer = undefined;
      void this.#disconnect(old);
    }
    if (this.#closed) throw new Error("the transactional producer was closed");
    const started = performance.now();
    const from = this.#in.consumer[kOptions] as unknown as Record<string, unknown>;
    const producer = new Producer({
      ...connectionOptions(from),
      clientId: `${this.#in.consumer.clientId}-tx`,
      idempotent: true,
      transactionalId: this.#id,
      timeout: this.#options.transactionTimeoutMs ?? 60_000,
      retries: 10,
      retryDelay: (_client: unknown, _op: string, attempt: number) => Math.min(1_000, 10 * 2 ** attempt),
    }) as unknown as ClientProducer;
    this.#stats.created++;
    const mp: MemberProducer = { producer, broken: false, quiet: Promise.resolve() };
    try {
      const t = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 });
      await t.cancel();
    } catch (error) {
      void this.#disconnect(mp);
      throw error;
    }
    const ms = performance.now() - started;
    this.#stats.lastInitMs = ms;
    this.#stats.totalInitMs += ms;
    if (this.#stats.maxInitMs === undefined || ms > this.#stats.maxInitMs) this.#stats.maxInitMs = ms;
    if (this.#closed) {
      void this.#disconnect(mp);
      throw new Error("the transactional producer was closed");
    }
    this.#producer = mp;
    return mp;
  }

  async open(partitions: readonly OpenPartition[], signal: AbortSignal): Promise<readonly CommittedPosition[]> {
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted || this.#closed) throw new Error("the partitions ended before they were open");
      try {
        await this.#ready(); // a failed transaction's uncertain outcome is settled before the read
        // Require-stable: a transaction (ours or the old owner's) with offsets of these partitions still pending is waited out.
        const positions = await readCommitted(this.#in.consumer, partitions);
        if (signal.aborted || this.#closed) throw new Error("the partitions ended before they were open");
        await seekBack(this.#in, partitions, positions);
        return positions;
      } catch (error) {
        if (signal.aborted || this.#closed) throw error;
        this.#in.openFailed?.(error, partitions);
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  commit(transactions: readonly PartitionTransaction[], timeoutMs: number): Promise<readonly TransactionOutcome[]> {
    if (transactions.length === 0) return Promise.resolve([]);
    // One transaction at a time: a revoke's urgent commit may overlap the periodic one.
    // The generation of the assignment the proposal was made in (the runner calls this in
    // that tick): a transaction that reaches its offsets after a rebalance is refused.
    const membership = this.#in.membership();
    const run = this.#tail.then(() => this.#one(transactions, timeoutMs, membership));
    this.#tail = run.then(() => {}, () => {});
    return run;
  }

  async #one(transactions: readonly PartitionTransaction[], timeoutMs: number, membership: Membership | undefined): Promise<TransactionOutcome[]> {
    const all = (o: TransactionOutcome): TransactionOutcome[] => transactions.map(() => o);
    if (this.#closed) return all({ ok: false, fenced: false, error: new Error("the transactional producer was closed") });
    let refused!: (error: unknown) => void;
    const verdict = new Promise<unknown>((r) => (refused = r));
    let mp: MemberProducer | undefined;
    const run = (async () => {
      mp = await this.#ready();
      const producer = mp.producer;
      const txn = await producer.beginTransaction();
      try {
        const outputs = transactions.flatMap((t) => t.outputs);
        for (let i = 0; i < outputs.length;) {
          const messages: ProducedMessage[] = [];
          let bytes = 0;
          for (; i < outputs.length && (bytes < REQUEST_BYTES || messages.length === 0); i++) {
            bytes += sizeOf(outputs[i]);
            messages.push(toPlatformaticMessage(outputs[i]));
          }
          await txn.send({ messages });
        }
        await txn.addConsumer(this.#in.consumer);
        if (membership === undefined) throw new StaleGenerationError("the offsets");
        await sendTxnOffsets(this.#in.consumer, producer, membership, transactions);
        await txn.commit();
      } catch (error) {
        mp.broken = true;
        refused(error);
        if (producer.transaction === txn && !txn.completed) await timeout(txn.abort(), timeoutMs, "the abort").catch(() => {});
        throw error;
      }
    })();
    const bounded = timeout(run, timeoutMs, `the transaction of ${transactions.length} partitions`);
    const quiet = bounded.then(() => {}, () => {});
    try {
      await bounded;
      return all({ ok: true });
    } catch (error) {
      if (mp) {
        mp.broken = true; // its outcome may be unknown: its replacement's InitProducerId settles it
        mp.quiet = quiet;
      }
      if (!(error instanceof TransactionTimeoutError)) return all({ ok: false, fenced: isFenced(error), error });
      let grace: ReturnType<typeof setTimeout> | undefined;
      const said = await Promise.race([
        verdict,
        new Promise<undefined>((r) => (grace = setTimeout(() => r(undefined), Math.min(VERDICT_GRACE_MS, timeoutMs)))),
      ]).finally(() => clearTimeout(grace));
      return all(isFenced(said) ? { ok: false, fenced: true, error: said } : { ok: false, fenced: false, error });
    }
  }

  /** Nothing to release: the member's producer serves every partition it owns. */
  release(_partitions: readonly TopicPartition[]): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const mp = this.#producer;
    this.#producer = undefined;
    await Promise.all([mp && this.#disconnect(mp), this.#in.alsoClose?.close().catch(() => {})]);
  }

  async #disconnect(mp: MemberProducer): Promise<void> {
    this.#stats.closed++;
    await mp.producer.close().catch(() => mp.producer.close(true).catch(() => {}));
  }
}
