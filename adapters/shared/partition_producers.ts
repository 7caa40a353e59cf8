/**
 * The transactional producers of the bindings' exactly-once ports, one per assigned input
 * partition, whatever the client: opening a partition makes and initialises its producer
 * (InitProducerId fences every earlier producer of its transactional id) and then reads the
 * committed offsets, retried until it succeeds or the partitions end; a kept healthy producer
 * stays; a producer whose transaction is in flight is replaced or closed only once that
 * transaction settled; an aborted open closes what it made; each producer runs one
 * transaction at a time (serial_transaction.ts). The client's steps (make, initialise,
 * close, the committed read and seek, a transaction's requests) are the binding's.
 *
 * @module
 */
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import type { OpenPartition, TransactionOutcome } from "../../core/consumer/port/mod.ts";
import { releaseProducers, runSerialTransaction, type SerialProducer } from "./serial_transaction.ts";
import { tpKey } from "./topic_partitions.ts";

/** What the producers per partition cost so far. */
export interface ProducerStats {
  /** Producers open now (one per assigned partition at most). */
  open: number;
  /** Producers made since start. */
  created: number;
  /** Producers closed since start. */
  closed: number;
  /** Connect + InitProducerId of the last producer, ms. */
  lastInitMs: number | undefined;
  /** Largest connect + InitProducerId, ms. */
  maxInitMs: number | undefined;
  /** Sum of every connect + InitProducerId, ms (divide by `created`). */
  totalInitMs: number;
}

/** A partition's transactional producer and its turn-taking state. */
export interface PartitionProducer<P> extends SerialProducer {
  readonly producer: P;
}

/** A binding's steps of its producers. */
export interface ProducerSteps<P> {
  /** A new transactional producer for the partition (not connected yet). */
  make(topic: string, partition: number): P;
  /** Connects it and sends its InitProducerId (fencing every earlier producer of its id); throws when that failed. */
  init(producer: P): Promise<void>;
  /** Closes it; never throws. */
  close(producer: P): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The producers of one consumer's assigned partitions (by `tpKey`).
 *
 * ```ts illustrative
 * const producers = new PartitionProducers({ make, init, close });
 * const positions = await producers.open(partitions, signal, async (ps, stillOpen) => {
 *   const committed = await readCommitted(ps);
 *   stillOpen();
 *   seek(committed);
 *   return committed;
 * });
 * ```
 */
export class PartitionProducers<P> {
  readonly #steps: ProducerSteps<P>;
  readonly #producers = new Map<string, PartitionProducer<P>>();
  #closed = false;
  readonly #stats: ProducerStats = { open: 0, created: 0, closed: 0, lastInitMs: undefined, maxInitMs: undefined, totalInitMs: 0 };

  /** @param steps the binding's make, init and close of a producer */
  constructor(steps: ProducerSteps<P>) {
    this.#steps = steps;
  }

  /** What the producers cost so far. */
  stats(): ProducerStats {
    return { ...this.#stats, open: this.#producers.size };
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Makes ready the producers of `partitions` (a kept healthy one stays), then runs
   * `positions` (the binding's committed read and seek; it calls `stillOpen()` after each
   * step, which throws once the partitions ended); a failure is reported to `failed` and
   * tried again with a backoff until the partitions end (`signal`) or the producers close.
   * An open that ends so closes the producers it made: left in place, one could fence the
   * partition's next owner later.
   */
  async open(
    partitions: readonly OpenPartition[],
    signal: AbortSignal,
    positions: (partitions: readonly OpenPartition[], stillOpen: () => void) => Promise<CommittedPosition[]>,
    failed?: (error: unknown, partitions: readonly TopicPartition[]) => void,
  ): Promise<CommittedPosition[]> {
    const mine = new Map<string, PartitionProducer<P>>();
    const aborted = (): Error => {
      this.#forget(mine);
      return new Error("the partitions ended before their producers were open");
    };
    const stillOpen = (): void => {
      if (signal.aborted || this.#closed) throw aborted();
    };
    for (let attempt = 0; ; attempt++) {
      stillOpen();
      try {
        // Every producer settles before the next step: none is set up after an abort released them.
        const ready = await Promise.allSettled(partitions.map((p) => this.#ready(p, mine)));
        const rejected = ready.find((r): r is PromiseRejectedResult => r.status === "rejected");
        if (rejected) throw rejected.reason;
        return await positions(partitions, stillOpen);
      } catch (error) {
        if (signal.aborted || this.#closed) {
          this.#forget(mine);
          throw error;
        }
        failed?.(error, partitions);
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /** Closes and forgets the producers of `mine` that are still the ones in place (a later open's stay). */
  #forget(mine: ReadonlyMap<string, PartitionProducer<P>>): void {
    for (const [key, pp] of mine) {
      if (this.#producers.get(key) !== pp) continue;
      this.#producers.delete(key);
      void this.#disconnect(pp);
    }
  }

  /**
   * The partition's producer, open and initialised (fencing every earlier one), unless a kept
   * healthy one is there; one it sets up is recorded in `mine`.
   */
  async #ready(p: OpenPartition, mine: Map<string, PartitionProducer<P>>): Promise<void> {
    const key = tpKey(p.topic, p.partition);
    const old = this.#producers.get(key);
    if (old && p.kept && !old.busy && !old.broken) return;
    if (old) {
      this.#producers.delete(key);
      // A transaction still in flight (a revoke's last one, racing the rejoin) ends first:
      // the new producer's InitProducerId would abort it, losing work this member owned.
      if (old.busy) await old.quiet;
      void this.#disconnect(old);
    }
    const started = performance.now();
    const producer = this.#steps.make(p.topic, p.partition);
    this.#stats.created++;
    const pp: PartitionProducer<P> = { producer, busy: 0, tail: Promise.resolve(), broken: false, fenced: undefined, quiet: Promise.resolve() };
    try {
      await this.#steps.init(producer);
    } catch (error) {
      void this.#disconnect(pp);
      throw error;
    }
    const ms = performance.now() - started;
    this.#stats.lastInitMs = ms;
    this.#stats.totalInitMs += ms;
    if (this.#stats.maxInitMs === undefined || ms > this.#stats.maxInitMs) this.#stats.maxInitMs = ms;
    if (this.#closed) {
      // Closed meanwhile (shutdown): an open producer would keep the process alive.
      void this.#disconnect(pp);
      throw new Error("the transactional producers were closed");
    }
    const now = this.#producers.get(key);
    if (now) void this.#disconnect(now); // a concurrent open won: keep the newest (it fenced the other)
    this.#producers.set(key, pp);
    mine.set(key, pp);
  }

  /**
   * Runs `steps` as the transaction of `t` on its partition's producer (serial_transaction.ts):
   * after the transaction before it, within `timeoutMs`; refused at once without a usable producer.
   * @param isFenced whether an error is the broker's fencing of this producer
   */
  run(
    t: TopicPartition,
    timeoutMs: number,
    isFenced: (error: unknown) => boolean,
    steps: (producer: P, failed: (error: unknown) => void) => Promise<void>,
  ): Promise<TransactionOutcome> {
    const pp = this.#producers.get(tpKey(t.topic, t.partition));
    return runSerialTransaction(pp, this.#closed, t, timeoutMs, isFenced, (failed) => steps(pp!.producer, failed));
  }

  /** Closes the producers of `partitions`, each once its transaction in flight settled. */
  release(partitions: readonly TopicPartition[]): Promise<void> {
    return releaseProducers(this.#producers, partitions, (pp) => this.#disconnect(pp));
  }

  /** Closes every producer; none is made after. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#producers.values()];
    this.#producers.clear();
    await Promise.all(all.map((pp) => this.#disconnect(pp)));
  }

  async #disconnect(pp: PartitionProducer<P>): Promise<void> {
    this.#stats.closed++;
    await this.#steps.close(pp.producer);
  }
}
