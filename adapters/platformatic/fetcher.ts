/**
 * The binding's fetch loop. The client's `consume()` stream pauses only as a whole and
 * buffers what it fetched, so the binding drives `Consumer.fetch` itself: one Fetch per
 * leader broker at a time, for exactly the assigned partitions that are neither paused nor
 * waiting for their start position, from the binding's own fetch positions. A fetched
 * batch the runner does not take is dropped and fetched again later (the position moves
 * only past a taken batch), so nothing is buffered beyond one response per broker.
 *
 * Fetches go through a connection pool of their own: a Fetch waits up to `maxWaitTime` on
 * the broker, and a request behind it on the same connection (a heartbeat, a commit) would
 * wait as long.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import { ConnectionPool, kOptions } from "@platformatic/kafka";
import type { ClientSink, EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { endOffsetOf } from "../shared/end_offsets.ts";
import { groupByTopic } from "../shared/topic_partitions.ts";
import { assembleBatch, type RawBatch, type RawRecord } from "./batch_assembly.ts";
import { brokersOf, hasApiId } from "./errors.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import type { ClientConsumer, PlatformaticMessage } from "./types.ts";

/** Fetch settings. */
export interface FetchSettings {
  /** Longest a Fetch waits on the broker for data (ms). */
  readonly maxWaitTime: number;
  /** Most bytes per partition per Fetch. */
  readonly maxBytesPerPartition: number;
  /** Most bytes per Fetch. */
  readonly maxBytes: number;
  /** `read_committed` (default) or `read_uncommitted`. */
  readonly readCommitted: boolean;
  /** Where a partition starts without a committed offset, and after an out-of-range position. */
  readonly fromBeginning: boolean;
}

interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  readonly assignment: number; // which assignment it belongs to
  position: number | undefined; // the next offset to fetch; undefined until known
  paused: boolean;
}

const EMPTY_HEADERS: Readonly<Record<string, Buffer | null>> = Object.freeze({});

function messageOf(topic: string, partition: number, batch: RawBatch, r: RawRecord, offset: number): PlatformaticMessage {
  let headers = EMPTY_HEADERS;
  if (r.headers.length > 0) {
    const h: Record<string, Buffer | null> = {};
    for (const [k, v] of r.headers) h[k ? (k as Buffer).toString("utf8") : ""] = v as Buffer | null;
    headers = h;
  }
  return {
    topic,
    partition,
    offset: String(offset),
    timestamp: String(Number(batch.firstTimestamp) + Number(r.timestampDelta)), // ms: exact as numbers; no BigInt made per record
    key: r.key as Buffer | null,
    value: r.value as Buffer | null,
    headers,
  };
}

/** The fetch loop of one binding. */
export class Fetcher {
  readonly #consumer: ClientConsumer;
  readonly #settings: FetchSettings;
  readonly #sink: ClientSink<PlatformaticMessage>;
  readonly #pool: ConnectionPool;
  #partitions = new Map<string, PartitionState>();
  #assignment = 0;
  #stopped = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #unreachable = false;

  /**
   * A fetch loop over `consumer`, delivering to `sink` (started by {@link run}).
   * @param settings fetch settings
   */
  constructor(consumer: ClientConsumer, sink: ClientSink<PlatformaticMessage>, settings: FetchSettings) {
    this.#consumer = consumer;
    this.#sink = sink;
    this.#settings = settings;
    this.#pool = new ConnectionPool(consumer.clientId, { ...consumer[kOptions] });
  }

  /** Starts the loop (once). */
  run(): void {
    this.#loop ??= this.#run();
  }

  /** The number of the latest assignment (each {@link assign}, {@link add} and {@link clear} makes a new one). */
  get assignment(): number {
    return this.#assignment;
  }

  /** A new assignment: the partitions, paused until their start positions are {@link positioned}. Returns its number. */
  assign(partitions: readonly TopicPartition[]): number {
    this.#partitions = new Map();
    return this.add(partitions);
  }

  /**
   * Partitions added to the current assignment (a cooperative rebalance), paused until their
   * start positions are {@link positioned}; the partitions already assigned carry on. Returns
   * the number of this addition.
   */
  add(partitions: readonly TopicPartition[]): number {
    const assignment = ++this.#assignment;
    for (const { topic, partition } of partitions) {
      // Pauses do not carry over: the runner pauses anew what it needs (inside `assigned`).
      this.#partitions.set(tpKey(topic, partition), { topic, partition, assignment, position: undefined, paused: false });
    }
    return assignment;
  }

  /** Partitions that leave the assignment (a cooperative revoke); the rest carry on. */
  remove(partitions: readonly TopicPartition[]): void {
    for (const { topic, partition } of partitions) this.#partitions.delete(tpKey(topic, partition));
  }

  /** Nothing is assigned (a revoke or a loss began). */
  clear(): void {
    this.#assignment++;
    this.#partitions = new Map();
  }

  /** Whether some partition of assignment (or addition) `assignment` is still assigned. */
  holds(assignment: number): boolean {
    for (const p of this.#partitions.values()) if (p.assignment === assignment) return true;
    return false;
  }

  /** The start positions of assignment (or addition) `assignment`'s partitions (ignored for partitions that left it since). */
  positioned(assignment: number, positions: ReadonlyMap<string, number>): void {
    for (const [key, position] of positions) {
      const p = this.#partitions.get(key);
      if (p && p.assignment === assignment && p.position === undefined) p.position = position;
    }
    this.#kick();
  }

  /**
   * Moves the fetch positions of the current assignment's partitions (by `tpKey`; others are
   * ignored), e.g. back to the committed offsets after a failed transaction; `unknownOnly`:
   * only where no position is known yet. An answer to a Fetch sent from the old position is
   * dropped.
   */
  seek(positions: ReadonlyMap<string, number>, unknownOnly: boolean): void {
    for (const [key, position] of positions) {
      const p = this.#partitions.get(key);
      if (p && (!unknownOnly || p.position === undefined)) p.position = position;
    }
    this.#kick();
  }

  /** Stops (`true`) or restarts (`false`) fetching these partitions. */
  setPaused(partitions: readonly TopicPartition[], paused: boolean): void {
    for (const { topic, partition } of partitions) {
      const p = this.#partitions.get(tpKey(topic, partition));
      if (p) p.paused = paused;
    }
    if (!paused) this.#kick();
  }

  /** Ends the loop; resolves once the Fetch in flight (if any) returned, and closes the fetch connections. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#kick();
    await this.#loop?.catch(() => {});
    await this.#pool.close().catch(() => {});
  }

  #kick(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => ((this.#wake = undefined), resolve()), ms);
      this.#wake = () => (clearTimeout(timer), resolve());
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped && !this.#sink.signal.aborted) {
      const ready = [...this.#partitions.values()].filter((p) => !p.paused && p.position !== undefined);
      if (ready.length === 0) {
        await this.#sleep(100);
        continue;
      }
      let wait = 0;
      try {
        const topics = [...new Set(ready.map((p) => p.topic))];
        const metadata = await this.#consumer.metadata({ topics });
        const byNode = new Map<number, PartitionState[]>();
        for (const p of ready) {
          const leader = metadata.topics.get(p.topic)?.partitions[p.partition]?.leader;
          if (leader === undefined || leader < 0) continue;
          const list = byNode.get(leader);
          if (list) list.push(p);
          else byNode.set(leader, [p]);
        }
        const ids = new Map<string, string>();
        for (const t of topics) {
          const id = metadata.topics.get(t)?.id;
          if (id !== undefined) ids.set(t, id);
        }
        await Promise.all([...byNode].map(([node, list]) => this.#fetch(node, list, ids)));
        if (byNode.size === 0) wait = 100;
      } catch (error) {
        if (this.#stopped) break;
        this.#unreachable = true;
        wait = this.#sink.unavailable(error, brokersOf(error));
      }
      if (wait > 0 && !this.#stopped) await this.#sleep(wait);
    }
  }

  /** One Fetch from `node` for `list`; delivers what it brought. Throws when the cluster did not answer. */
  async #fetch(node: number, list: readonly PartitionState[], ids: ReadonlyMap<string, string>): Promise<void> {
    const s = this.#settings;
    const requested = list.map((p) => ({ p, position: p.position as number, assignment: p.assignment }));
    const byId = new Map<string, Array<(typeof requested)[number]>>();
    const names = new Map<string, string>();
    for (const r of requested) {
      const id = ids.get(r.p.topic);
      if (id === undefined) continue;
      names.set(id, r.p.topic);
      const l = byId.get(id);
      if (l) l.push(r);
      else byId.set(id, [r]);
    }
    let response: Awaited<ReturnType<ClientConsumer["fetch"]>>;
    try {
      response = await this.#consumer.fetch({
        node,
        maxWaitTime: s.maxWaitTime,
        minBytes: 1,
        maxBytes: s.maxBytes,
        isolationLevel: s.readCommitted ? 1 : 0,
        connectionPool: this.#pool,
        topics: [...byId].map(([topicId, rs]) => ({
          topicId,
          partitions: rs.map((r) => ({
            partition: r.p.partition,
            fetchOffset: BigInt(r.position),
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
            partitionMaxBytes: s.maxBytesPerPartition,
          })),
        })),
      });
    } catch (error) {
      if (hasApiId(error, "OFFSET_OUT_OF_RANGE") && this.#outOfRange(error, names, requested)) return;
      throw error;
    }
    if (this.#unreachable) {
      this.#unreachable = false;
      this.#sink.available();
    }
    const ends: EndOffset[] = [];
    for (const t of response.responses) {
      const topic = names.get(t.topicId);
      if (topic === undefined) continue;
      for (const part of t.partitions) {
        const r = requested.find((x) => x.p.topic === topic && x.p.partition === part.partitionIndex);
        const p = r && this.#partitions.get(tpKey(topic, part.partitionIndex));
        // A revoke, a new assignment or a re-fetch since the request: this answer is stale.
        if (!r || !p || p !== r.p || p.assignment !== r.assignment || p.position !== r.position) continue;
        const partition = part.partitionIndex;
        // Every partition's answer carries its high watermark, one without records too (the lag in metrics()).
        const endOffset = endOffsetOf(part.highWatermark);
        if (endOffset !== undefined) ends.push({ topic, partition, endOffset });
        const batch = assembleBatch(
          topic,
          partition,
          r.position,
          part.records as unknown as RawBatch[] | null | undefined,
          part.abortedTransactions,
          s.readCommitted,
          (b, rec, offset) => messageOf(topic, partition, b, rec, offset),
        );
        if (!batch) continue;
        if (this.#stopped || p.paused) continue; // not taken: fetched again after a resume
        if (this.#sink.deliver(batch)) p.position = batch.next;
      }
    }
    if (ends.length > 0) this.#sink.endOffsets?.(ends);
  }

  /**
   * The log end offsets (high watermarks) of `partitions`, for those no fetch reports
   * (paused): one ListOffsets per leader through the client's `listOffsets`.
   */
  async endOffsets(partitions: readonly TopicPartition[]): Promise<EndOffset[]> {
    const grouped = groupByTopic(partitions);
    const offsets = await this.#consumer.listOffsets({
      topics: grouped.map((g) => g.topic),
      partitions: Object.fromEntries(grouped.map((g) => [g.topic, g.partitions])),
      isolationLevel: 0, // the high watermark, as a fetch reports it
    });
    const out: EndOffset[] = [];
    for (const { topic, partitions: asked } of grouped) {
      const list = offsets.get(topic);
      for (const partition of asked) {
        const endOffset = endOffsetOf(list?.[partition]);
        if (endOffset !== undefined) out.push({ topic, partition, endOffset });
      }
    }
    return out;
  }

  /** An OFFSET_OUT_OF_RANGE answer: those partitions restart at the log start (or end) the answer names. */
  #outOfRange(error: unknown, names: ReadonlyMap<string, string>, requested: ReadonlyArray<{ p: PartitionState; position: number; assignment: number }>): boolean {
    const response = (error as { response?: Awaited<ReturnType<ClientConsumer["fetch"]>> }).response;
    if (!response || !Array.isArray(response.responses)) return false;
    let moved = false;
    for (const t of response.responses) {
      const topic = names.get(t.topicId);
      for (const part of t.partitions) {
        if (part.errorCode === 0 || topic === undefined) continue;
        const r = requested.find((x) => x.p.topic === topic && x.p.partition === part.partitionIndex);
        if (!r || r.p.position !== r.position || r.p.assignment !== r.assignment) continue;
        const to = Number(this.#settings.fromBeginning ? part.logStartOffset : part.highWatermark);
        if (Number.isSafeInteger(to) && to >= 0) {
          r.p.position = to;
          moved = true;
        }
      }
    }
    return moved;
  }
}
