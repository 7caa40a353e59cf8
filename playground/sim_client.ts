/**
 * The playground's binding of the client port (`ConsumerClient` in core/consumer/port/client.ts):
 * one member of a consumer group over a {@link SimBroker}. It fetches a batch per partition
 * every `fetchIntervalMs` (unless the runner paused it), commits after a simulated latency,
 * and turns the page's buttons into group events: an assignment, an orderly revoke, or a
 * crash (the member dies: nothing more is fetched or committed).
 *
 * @module
 */
import type { ClientSink, CommitOffset, ConsumerClient, EndOffset, TopicPartition } from "../core/mod.ts";
import type { SimBroker, SimRecord } from "./sim_broker.ts";

/** Rates and latencies of a simulated member. */
export interface SimClientOptions {
  /** The member's name (the coordinator's owner of its partitions). */
  member: string;
  /** Milliseconds between fetches. */
  fetchIntervalMs: number;
  /** Records per fetched batch (at most). */
  batchSize: number;
  /** Milliseconds a commit takes to be acknowledged. */
  commitLatencyMs: number;
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A simulated group member's client. */
export class SimClient implements ConsumerClient<SimRecord> {
  /** Rates, changeable while it runs (the page's sliders). */
  readonly options: SimClientOptions;
  /** Records delivered to the runner (taken batches only). */
  fetched = 0;
  /** Whether the member crashed. */
  dead = false;
  readonly #broker: SimBroker;
  readonly #position = new Map<number, number>(); // assigned partition → next offset to fetch
  readonly #paused = new Set<number>();
  #sink: ClientSink<SimRecord> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /**
   * A member of `broker`'s group; it fetches nothing until {@link assign}.
   * @param broker the simulated topic and coordinator
   * @param options rates and latencies
   */
  constructor(broker: SimBroker, options: SimClientOptions) {
    this.#broker = broker;
    this.options = { ...options };
  }

  /** Partitions paused by the runner now. */
  get paused(): readonly number[] {
    return [...this.#paused];
  }

  /** Starts the fetch loop. */
  start(sink: ClientSink<SimRecord>): Promise<void> {
    this.#sink = sink;
    const tick = (): void => {
      if (this.#stopped || this.dead) return;
      this.#fetch();
      this.#timer = setTimeout(tick, this.options.fetchIntervalMs);
    };
    tick();
    return Promise.resolve();
  }

  /**
   * A new generation gives this member `partitions`: the coordinator records it as their
   * owner, and the runner reads their committed offsets and completed sets back.
   */
  assign(partitions: readonly number[]): void {
    for (const p of partitions) this.#broker.owners.set(p, this.options.member);
    this.#position.clear();
    this.#paused.clear();
    const committed = this.#broker.read(partitions);
    for (const c of committed) this.#position.set(c.partition, c.offset ?? 0);
    this.#sink?.assigned(this.#tps(partitions), wait(this.options.commitLatencyMs).then(() => committed));
  }

  /** An orderly revoke: the runner drains within its bound and commits, then the partitions leave. */
  async revoke(partitions: readonly number[]): Promise<void> {
    await this.#sink?.revoking(this.#tps(partitions));
    for (const p of partitions) this.#position.delete(p);
  }

  /** The member dies at once (a SIGKILL): no drain, no final commit, commits in flight never land. */
  crash(): void {
    this.dead = true;
    this.#sink?.lost();
    this.#position.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  pause(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.#paused.add(tp.partition);
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.#paused.delete(tp.partition);
  }

  async commit(offsets: readonly CommitOffset[]): Promise<void> {
    await wait(this.options.commitLatencyMs);
    if (this.dead) throw new Error(`${this.options.member} crashed before the commit was acknowledged`);
    this.#broker.commit(this.options.member, offsets);
  }

  stopFetching(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  close(): Promise<void> {
    this.stopFetching();
    return Promise.resolve();
  }

  /** The simulated logs' ends (for the lag of paused partitions, which no fetch reports). */
  endOffsets(partitions: readonly TopicPartition[]): Promise<readonly EndOffset[]> {
    return Promise.resolve(partitions.map((p) => ({ ...p, endOffset: this.#broker.logs[p.partition]?.length ?? 0 })));
  }

  keyOf(message: SimRecord): string | undefined {
    return message.key;
  }

  #fetch(): void {
    const sink = this.#sink;
    if (!sink) return;
    for (const [partition, from] of this.#position) {
      if (this.#paused.has(partition)) continue;
      const log = this.#broker.logs[partition];
      if (from >= log.length) continue;
      const messages = log.slice(from, from + this.options.batchSize);
      const offsets = messages.map((m) => m.offset);
      const next = offsets[offsets.length - 1] + 1;
      if (sink.deliver({ topic: this.#broker.topic, partition, messages, offsets, next, endOffset: log.length })) {
        this.#position.set(partition, next);
        this.fetched += messages.length;
      }
    }
  }

  #tps(partitions: readonly number[]): TopicPartition[] {
    return partitions.map((partition) => ({ topic: this.#broker.topic, partition }));
  }
}
