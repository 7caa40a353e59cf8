/**
 * The simulated broker of the playground: one topic's partition logs and the group's
 * committed offsets (with their metadata), held in the page. A commit lands after a
 * simulated latency and only for the member that owns the partition in the current
 * generation, as Kafka's group coordinator would accept it.
 *
 * @module
 */
import type { CommitOffset, CommittedPosition } from "../core/mod.ts";

/** One record of a simulated partition log. */
export interface SimRecord {
  /** The record's offset in its partition. */
  readonly offset: number;
  /** The record's key (all records of a key are in one partition). */
  readonly key: string;
  /** The record's value. */
  readonly value: string;
}

/** A partition's committed position as the simulated coordinator holds it. */
export interface Committed {
  /** The next offset to read. */
  readonly offset: number;
  /** The metadata stored with it (the completed set). */
  readonly metadata: string | undefined;
}

/** A topic with in-page partition logs and a group's committed offsets. */
export class SimBroker {
  /** The topic's name. */
  readonly topic: string;
  /** Per-partition logs, in offset order. */
  readonly logs: SimRecord[][];
  /** Committed positions, by partition. */
  readonly committed: Map<number, Committed> = new Map();
  /** Which member owns each partition now (the coordinator's view); commits of others are refused. */
  readonly owners: Map<number, string> = new Map();
  /** Commits acknowledged. */
  commits = 0;
  /** Commits refused (the sender no longer owned a partition). */
  refused = 0;

  /**
   * A topic whose partitions each hold `records` records, keyed by `keyOf(offset, partition)`.
   * @param topic the topic's name
   * @param partitions how many partitions
   * @param records records per partition
   * @param keyOf the key of each record
   */
  constructor(topic: string, partitions: number, records: number, keyOf: (offset: number, partition: number) => string) {
    this.topic = topic;
    this.logs = Array.from({ length: partitions }, (_, p) =>
      Array.from({ length: records }, (_, offset) => ({ offset, key: keyOf(offset, p), value: `${topic}/${p}@${offset}` })));
  }

  /** The committed positions of `partitions`, as a client reads them at assignment. */
  read(partitions: readonly number[]): CommittedPosition[] {
    return partitions.map((partition) => {
      const c = this.committed.get(partition);
      return { topic: this.topic, partition, offset: c?.offset, metadata: c?.metadata };
    });
  }

  /**
   * Stores `offsets` for `member`, all or nothing: refused (rejects) when the member does
   * not own one of the partitions any more.
   */
  commit(member: string, offsets: readonly CommitOffset[]): void {
    for (const o of offsets) {
      if (o.topic !== this.topic || this.owners.get(o.partition) !== member) {
        this.refused++;
        throw new Error(`commit refused: ${member} does not own ${o.topic}/${o.partition}`);
      }
    }
    for (const o of offsets) this.committed.set(o.partition, { offset: o.offset, metadata: o.metadata });
    this.commits++;
  }
}
