/**
 * The Confluent binding's commits, one at a time: each is sent after the one before it
 * settled, so a late outcome never overtakes a newer commit, and only for partitions of the
 * current assignment. Each resolves once librdkafka reported it acknowledged, or the
 * broker's committed positions read back hold it (commits.ts). A late resend of an older
 * commit that moved a partition back queues a repair: the partition's newest commit is
 * sent again, after whatever is queued.
 *
 * @module
 */
import type { CommitOffset } from "../../core/consumer/port/mod.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import type { CommitVerifier, ReadBack } from "./commits.ts";

/** What a {@link ConfluentCommitQueue} reads and drives. */
export interface CommitQueueInputs {
  /** Whether the consumer runs (started, not closed): otherwise nothing is committed. */
  readonly running: () => boolean;
  /** Whether the partition (by `tpKey`) is in the current assignment. */
  readonly assigned: (key: string) => boolean;
  /** The outcome verifier, once the consumer is connected. */
  readonly verifier: () => CommitVerifier | undefined;
  /** Hands a commit to the client (`commitOffsets`). */
  readonly send: (offsets: ReadonlyArray<{ topic: string; partition: number; offset: string; metadata?: string }>) => Promise<void>;
  /** Reads the broker's committed positions back (when the outcome is late). */
  readonly readBack: ReadBack;
  /** The coordinator acknowledged a commit. */
  readonly acknowledged: () => void;
}

/** Sends the binding's commits one at a time and repairs the ones an older resend moved back. */
export class ConfluentCommitQueue {
  readonly #in: CommitQueueInputs;
  #tail: Promise<void> = Promise.resolve();
  /** The newest commit sent per partition of the current assignment (what a repair sends again). */
  readonly #lastSent = new Map<string, CommitOffset>();
  /** Partitions the queued repair commits again (empty: none queued). */
  readonly #repairs = new Set<string>();

  /**
   * Commits over `inputs`.
   * @param inputs what they read and drive
   */
  constructor(inputs: CommitQueueInputs) {
    this.#in = inputs;
  }

  /** Settles once every commit and repair queued so far settled. */
  get settled(): Promise<void> {
    return this.#tail;
  }

  /** Commits `offsets` once the commit before settled; resolves only when acknowledged. */
  commit(offsets: readonly CommitOffset[]): Promise<void> {
    const run = this.#tail.then(() => this.#send(offsets));
    this.#tail = run.then(() => {}, () => {});
    return run;
  }

  /** The partition (by `tpKey`) left the assignment or came new to it: nothing of it to repair. */
  forget(key: string): void {
    this.#lastSent.delete(key);
  }

  /** Every partition left the assignment. */
  forgetAll(): void {
    this.#lastSent.clear();
  }

  /**
   * A late resend of an older commit may have moved these partitions' committed offsets back
   * (see commits.ts): commit their newest positions again, after any commit queued now, for
   * the partitions still assigned. Repairs asked for before the queued one runs join it
   * (after an outage every held commit's outcome asks for one). A failed repair changes
   * nothing the runner counts on (its confirmed positions were acknowledged); its next commit
   * moves them on.
   */
  repair(partitions: ReadonlyArray<{ topic: string; partition: number }>): void {
    const queued = this.#repairs.size > 0;
    for (const p of partitions) this.#repairs.add(tpKey(p.topic, p.partition));
    if (queued) return;
    const run = this.#tail.then(() => {
      const keys = [...this.#repairs];
      this.#repairs.clear();
      if (!this.#in.running()) return;
      const offsets = keys.filter((k) => this.#in.assigned(k)).map((k) => this.#lastSent.get(k)).filter((o) => o !== undefined);
      if (offsets.length > 0) return this.#send(offsets);
    });
    this.#tail = run.then(() => {}, () => {});
    void run.catch(() => {});
  }

  async #send(offsets: readonly CommitOffset[]): Promise<void> {
    const inputs = this.#in;
    const verifier = inputs.verifier();
    if (!inputs.running() || !verifier) throw new Error("the Confluent consumer is not running: nothing was committed");
    for (const o of offsets) {
      if (!inputs.assigned(tpKey(o.topic, o.partition))) {
        throw new Error(`refusing to commit ${o.topic}/${o.partition}: not in the current assignment`);
      }
    }
    for (const o of offsets) this.#lastSent.set(tpKey(o.topic, o.partition), o);
    const list = offsets.map((o) => ({
      topic: o.topic,
      partition: o.partition,
      offset: String(o.offset),
      ...(o.metadata !== undefined ? { metadata: o.metadata } : {}),
    }));
    // Read back when the outcome is late (e.g. during the awaited rebalance callback, which
    // holds librdkafka's commit outcome until the client polls again; see commits.ts).
    await verifier.commit(offsets, () => inputs.send(list), inputs.readBack);
    inputs.acknowledged();
  }
}
