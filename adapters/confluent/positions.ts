/**
 * Where the Confluent binding's partitions start, and the floor below which their records
 * are not delivered: the committed offsets read at each assignment (through the internal
 * client), which partitions had a batch taken, which the runner paused, and the re-read of
 * a partition whose start is not known before it resumes. Used by `confluent_client.ts`.
 *
 * @module
 */
import type { CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import type { ConfluentStartingPartition, ConfluentTopicPartition } from "./types.ts";

/** One partition's answer to a committed-offset read: `offset` absent when the group has none. */
export interface CommittedAnswer {
  topic: string;
  partition: number;
  offset?: number;
  metadata?: string;
}

/**
 * The internal client's committed-offset read (node-rdkafka `committed`). Read here rather
 * than through the KafkaJS-style `committed()`, which reports a committed offset of 0 and no
 * committed offset alike (`offset: null`). Each answer is a partition with `offset` absent
 * when the group has none, or an `Error` for a partition the broker refused.
 */
export interface CommittedSource {
  committed(
    partitions: ConfluentTopicPartition[],
    timeout: number,
    cb: (err: unknown, answer?: Array<CommittedAnswer | Error>) => void,
  ): unknown;
}

/** What {@link ConfluentPositions} asks of the binding. */
export interface PositionInputs {
  /** Where a partition without a committed offset starts (`undefined`: a policy only the client applies). */
  readonly reset: "earliest" | "latest" | undefined;
  /** Whether the partition (a {@link tpKey}) is in the current assignment. */
  assigned(key: string): boolean;
  /** The binding is closed: no read is tried any more. */
  closed(): boolean;
  /** The binding is closed or stopped fetching: a re-read ends. */
  stopped(): boolean;
  /** Resumes a partition whose start was read again (the binding's own `resume`). */
  resume(partitions: readonly TopicPartition[]): void;
}

/** What a resume of partitions comes to: those to resume at the client, and the seeks to their starts. */
export interface ResumePlan {
  readonly now: TopicPartition[];
  readonly seeks: Array<{ topic: string; partition: number; offset: string }>;
}

/** The start positions and committed floors of one binding's partitions. */
export class ConfluentPositions {
  readonly #in: PositionInputs;
  readonly #earliest: boolean;
  #reader: CommittedSource | undefined;
  /** Partitions of the current assignment that had a batch taken: the client knows their fetch position. */
  readonly #taken = new Set<string>();
  /**
   * Where each partition of the current assignment starts, once its committed offset was
   * read: the committed offset, -2 (earliest: the group has none, reset to earliest) or
   * `null` (none, reset to latest). Absent: not known (not read yet, or the read failed).
   */
  readonly #start = new Map<string, number | null>();
  /** Partitions the runner paused (and did not resume since). */
  readonly #paused = new Set<string>();
  /** Partitions whose start is being read again before they resume (see {@link resume}). */
  readonly #recovering = new Set<string>();
  /** Bumped on every assignment of a partition: an answer for an earlier assignment is dropped. */
  readonly #epoch = new Map<string, number>();

  /**
   * Positions over `inputs`.
   * @param inputs the reset policy and what it asks of the binding
   */
  constructor(inputs: PositionInputs) {
    this.#in = inputs;
    this.#earliest = inputs.reset === "earliest";
  }

  /** The internal client to read committed offsets through, once connected. */
  attach(reader: CommittedSource): void {
    this.#reader = reader;
  }

  /** `partitions` are new to the assignment: nothing taken, start unknown, no stale pause, a new epoch. */
  assigned(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) {
      const key = tpKey(p.topic, p.partition);
      this.#taken.delete(key);
      this.#start.delete(key);
      this.#paused.delete(key);
      this.#epoch.set(key, (this.#epoch.get(key) ?? 0) + 1);
    }
  }

  /** The committed offset read at this assignment (records below it are not delivered), if known and > 0. */
  floor(key: string): number | undefined {
    const floor = this.#start.get(key);
    return typeof floor === "number" && floor > 0 ? floor : undefined;
  }

  /** A batch of the partition was taken (or skipped whole): the client knows its fetch position. */
  took(key: string): void {
    this.#taken.add(key);
  }

  /** The runner paused `partitions`. */
  paused(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) this.#paused.add(tpKey(p.topic, p.partition));
  }

  /**
   * The runner resumes `partitions`. The client's pause drops the records it fetched but did
   * not deliver, and seeks back only partitions that delivered something: one that delivered
   * nothing yet would go on past the dropped records. Seek it back to where it starts: its
   * committed offset (or the reset policy when the group has none). When that is not known
   * (the read at assignment failed), it stays paused until a read succeeds (then resumed
   * through the binding): a guess (earliest) could move it behind its committed offset and
   * redo committed records.
   */
  resume(partitions: readonly TopicPartition[]): ResumePlan {
    const now: TopicPartition[] = [];
    const seeks: Array<{ topic: string; partition: number; offset: string }> = [];
    for (const p of partitions) {
      const key = tpKey(p.topic, p.partition);
      this.#paused.delete(key);
      if (this.#taken.has(key) || !this.#in.assigned(key)) {
        now.push(p);
        continue;
      }
      if (!this.#start.has(key)) {
        this.#recover(p);
        continue;
      }
      now.push(p);
      const start = this.#start.get(key);
      if (typeof start === "number") seeks.push({ topic: p.topic, partition: p.partition, offset: String(start) });
    }
    return { now, seeks };
  }

  /** Reads a partition's start again (retrying while it stays assigned), then resumes it there unless paused again since. */
  #recover(p: TopicPartition): void {
    const key = tpKey(p.topic, p.partition);
    if (this.#recovering.has(key)) return;
    this.#recovering.add(key);
    const epoch = this.#epoch.get(key);
    const current = (): boolean => !this.#in.stopped() && this.#epoch.get(key) === epoch && this.#in.assigned(key);
    void (async () => {
      try {
        for (let attempt = 0; current() && !this.#start.has(key); attempt++) {
          try {
            await this.committed([p]);
          } catch {
            await new Promise((r) => setTimeout(r, Math.min(5_000, 500 * (attempt + 1))));
          }
        }
      } finally {
        this.#recovering.delete(key);
      }
      if (current() && !this.#paused.has(key)) this.#in.resume([p]);
    })();
  }

  /** The committed offsets and metadata of `partitions` (a few tries: a rejection only costs the claims); records their starts. */
  async committed(partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
    let lastError: unknown;
    // The assignment each answer is for: one that arrives after the partition was assigned anew is not its start.
    const epochs = new Map(partitions.map((p) => [tpKey(p.topic, p.partition), this.#epoch.get(tpKey(p.topic, p.partition))]));
    for (let attempt = 0; attempt < 3 && !this.#in.closed(); attempt++) {
      try {
        const answer = await this.#read(partitions);
        return answer.map((p) => {
          const offset = p.offset;
          const known = typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0;
          const key = tpKey(p.topic, p.partition);
          if (this.#in.assigned(key) && epochs.has(key) && epochs.get(key) === this.#epoch.get(key)) {
            this.#start.set(key, known ? offset : this.#earliest ? -2 : null);
          }
          return { topic: p.topic, partition: p.partition, offset: known ? offset : undefined, metadata: p.metadata ?? null };
        });
      } catch (error) {
        lastError = error;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    throw lastError ?? new Error("the consumer closed before the committed offsets were read");
  }

  /** One read of the group's committed offsets of `partitions` (rejects when any partition's answer is an error). */
  #read(partitions: readonly TopicPartition[]): Promise<CommittedAnswer[]> {
    const reader = this.#reader;
    if (!reader) return Promise.reject(new Error("the Confluent consumer is not running"));
    return new Promise((resolve, reject) => {
      try {
        reader.committed(partitions.map((p) => ({ topic: p.topic, partition: p.partition })), 5_000, (err, answer) => {
          if (err) return reject(err);
          const bad = (answer ?? []).find((p) => p instanceof Error);
          if (bad !== undefined || !answer) return reject(bad ?? new Error("no answer to the committed-offset read"));
          resolve(answer as CommittedAnswer[]);
        });
      } catch (error) {
        reject(error); // e.g. not connected
      }
    });
  }

  /**
   * `assignment` with a start position for each partition of `fresh` whose start was read:
   * its committed offset, else the reset policy's end (-2 the earliest, -1 the latest). The
   * others go without one (the client looks them up).
   */
  withStarts(assignment: readonly ConfluentTopicPartition[], fresh: ReadonlySet<string>): ConfluentStartingPartition[] {
    return assignment.map((p) => {
      const key = tpKey(p.topic, p.partition);
      const start = fresh.has(key) ? this.#start.get(key) : undefined;
      const offset = typeof start === "number" ? start : start === null && this.#in.reset === "latest" ? -1 : undefined;
      return offset === undefined ? { topic: p.topic, partition: p.partition } : { topic: p.topic, partition: p.partition, offset };
    });
  }
}
