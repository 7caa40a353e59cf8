/**
 * An in-memory ConsumerClient for the runner's unit tests: the test drives deliveries
 * and group events by hand and inspects pauses, commits and dead letters.
 */
import type { ClientSink, CommitOffset, ConsumerClient, DeadLetterInfo, TopicPartition } from "../../core/mod.ts";

export interface Msg {
  key?: string;
  value: string;
  offset: number;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once `cond()` holds (polls every ms), or rejects after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 2_000, what = "condition"): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

const k = (tp: TopicPartition): string => `${tp.topic}/${tp.partition}`;

export class MemoryClient implements ConsumerClient<Msg> {
  sink!: ClientSink<Msg>;
  readonly paused = new Set<string>();
  readonly pauseLog: string[] = [];
  readonly commits: CommitOffset[][] = [];
  /** Offsets acknowledged, by "topic/partition". */
  readonly committed = new Map<string, number>();
  readonly deadLetters: Array<{ message: Msg; info: DeadLetterInfo }> = [];
  stoppedFetching = false;
  closed = false;
  inflightCommits = 0;
  maxInflightCommits = 0;
  /** Replace to delay or fail commits. */
  commitImpl: (offsets: readonly CommitOffset[]) => Promise<void> = async () => {};
  deadLetterImpl: ((message: Msg, info: DeadLetterInfo) => Promise<void>) | undefined;
  deadLetter?: (message: Msg, info: DeadLetterInfo) => Promise<void>;

  constructor(options: { deadLetter?: (message: Msg, info: DeadLetterInfo) => Promise<void> } = {}) {
    if (options.deadLetter) {
      const impl = options.deadLetter;
      this.deadLetter = async (message, info) => {
        await impl(message, info);
        this.deadLetters.push({ message, info });
      };
    }
  }

  start(sink: ClientSink<Msg>): Promise<void> {
    this.sink = sink;
    return Promise.resolve();
  }

  pause(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) {
      this.paused.add(k(p));
      this.pauseLog.push(`pause ${k(p)}`);
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) {
      this.paused.delete(k(p));
      this.pauseLog.push(`resume ${k(p)}`);
    }
  }

  async commit(offsets: readonly CommitOffset[]): Promise<void> {
    this.inflightCommits++;
    this.maxInflightCommits = Math.max(this.maxInflightCommits, this.inflightCommits);
    try {
      this.commits.push([...offsets]);
      await this.commitImpl(offsets);
      for (const o of offsets) this.committed.set(k(o), o.offset);
    } finally {
      this.inflightCommits--;
    }
  }

  stopFetching(): void {
    this.stoppedFetching = true;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  keyOf(m: Msg): string | undefined {
    return m.key;
  }

  /** Delivers records at `offsets` (values `topic/partition@offset`, keys from `keyOf`). */
  deliver(
    topic: string,
    partition: number,
    offsets: number[],
    next = offsets[offsets.length - 1] + 1,
    keyOf: (offset: number) => string | undefined = () => undefined,
  ): boolean {
    const messages = offsets.map((offset) => ({ offset, key: keyOf(offset), value: `${topic}/${partition}@${offset}` }));
    return this.sink.deliver({ topic, partition, messages, offsets, next });
  }
}

/** Offsets `from, from + 1, …` (count of them). */
export const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
