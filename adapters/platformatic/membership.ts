/**
 * The binding's side of the group: which partitions this member holds, under which
 * generation, and what a rebalance does to them. The client calls {@link Membership.beforeJoin}
 * (its `protocolsMetadata` hook, awaited) before every JoinGroup it sends and emits
 * `consumer:group:join` ({@link Membership.joined}) after every SyncGroup that ends a
 * rebalance for this member.
 *
 * Eager assignors (the default): every rebalance ends the assignment. Before the JoinGroup
 * the member gives up everything, orderly after a REBALANCE_IN_PROGRESS (drained and
 * committed under the old generation, still valid), else as a loss (the session or the
 * generation is gone: never committed again); each join brings a whole new assignment.
 *
 * Cooperative-sticky: a join brings the member's full assignment; partitions it already
 * held carry on untouched (their trackers, running records and commits), new ones are
 * added. The assignor never hands a partition another member still owns to anyone; the
 * owner gives it up in a round of its own: after a SyncGroup whose assignment lacks some
 * held partitions the client sets `consumer.assignments` to the new list and rejoins at
 * once. The hook before that JoinGroup finds the difference and revokes just those,
 * orderly: drained and committed under the new generation, which this member holds until
 * it rejoins (no other member gets them before that). A rejoin after REBALANCE_IN_PROGRESS
 * keeps everything; a rejoin after the membership or generation was lost (the client
 * empties `assignments`, or no rebalance was announced) loses everything, as above.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { ClientSink, CommittedPosition, TopicPartition } from "../../core/consumer/port/mod.ts";
import { tpKey } from "../shared/topic_partitions.ts";
import type { Fetcher, FetchSettings } from "./fetcher.ts";
import { committedWithRetries, startPositions } from "./positions.ts";
import type { ClientConsumer, PlatformaticMessage } from "./types.ts";

/** A join's payload as the client emits it. */
export interface JoinEvent {
  /** The new generation. */
  readonly generationId?: number;
  /** The member's whole assignment in it. */
  readonly assignments?: ReadonlyArray<{ readonly topic: string; readonly partitions: readonly number[] }>;
}

/** What a {@link Membership} reads and drives. */
export interface MembershipInputs {
  /** The client's consumer (its `assignments`, `generationId`, `memberId`). */
  readonly consumer: ClientConsumer;
  /** The cooperative-sticky assignor runs (else eager assignors). */
  readonly cooperative: boolean;
  /** Exactly-once: the transactional port reads the committed offsets after fencing and seeks; none are read here. */
  readonly transactional: boolean;
  /** Where a partition without a committed offset starts; `read_committed`. */
  readonly settings: FetchSettings;
  /** The runner's sink, once started. */
  readonly sink: () => ClientSink<PlatformaticMessage> | undefined;
  /** The fetch loop, once started. */
  readonly fetcher: () => Fetcher | undefined;
  /** Whether the binding closed. */
  readonly closed: () => boolean;
  /** Whether fetching stopped for good (shutdown): committed offsets are not read any more. */
  readonly stopped: () => boolean;
  /** The group answered. */
  readonly available: () => void;
  /** A read of start positions failed: reports it, returns the backoff (ms). */
  readonly unavailable: (error: unknown) => number;
}

/** The partitions this member holds and the generation they were assigned in. */
export class Membership {
  readonly #in: MembershipInputs;
  #held = new Set<string>();
  #generation: number | undefined;
  #rebalancing = false; // a rebalance was announced (REBALANCE_IN_PROGRESS, or a cooperative revoke round)

  /**
   * The membership of a binding over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: MembershipInputs) {
    this.#in = inputs;
  }

  /** The generation the held partitions were assigned in; `undefined` while none are held. */
  get generation(): number | undefined {
    return this.#generation;
  }

  /** Whether `topic`/`partition` is held. */
  holds(topic: string, partition: number): boolean {
    return this.#held.has(tpKey(topic, partition));
  }

  /** The held partitions. */
  partitions(): TopicPartition[] {
    return [...this.#held].map(fromKey);
  }

  /** The client announced a rebalance (`consumer:group:rebalance`). */
  rebalancing(): void {
    this.#rebalancing = true;
  }

  /** Awaited by the client before each JoinGroup (its `protocolsMetadata` hook); resolves to the subscription's user data. */
  async beforeJoin(): Promise<Buffer> {
    if (this.#in.cooperative) {
      await this.#beforeCooperativeJoin();
      return generationData(this.#in.consumer, this.#held.size > 0);
    }
    const orderly = this.#rebalancing;
    this.#rebalancing = false;
    if (this.#generation !== undefined) await this.#end(orderly);
    return Buffer.alloc(0);
  }

  /** The client's `consumer:group:join`: the member's whole assignment in a new generation. */
  joined(event: JoinEvent): void {
    const { sink, fetcher } = { sink: this.#in.sink(), fetcher: this.#in.fetcher() };
    if (!sink || !fetcher || this.#in.closed()) return;
    this.#rebalancing = false;
    this.#in.available();
    const partitions: TopicPartition[] = [];
    for (const a of event.assignments ?? []) for (const partition of a.partitions) partitions.push({ topic: a.topic, partition });
    const generation = event.generationId ?? this.#in.consumer.generationId;
    if (this.#in.cooperative && this.#generation !== undefined) {
      const next = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
      const gone = [...this.#held].filter((k) => !next.has(k)).map(fromKey);
      if (gone.length > 0) {
        // Not revoked in a round of its own (it should have been): never committed again.
        fetcher.remove(gone);
        for (const p of gone) this.#held.delete(tpKey(p.topic, p.partition));
        sink.lost(gone);
      }
      const added = partitions.filter((p) => !this.#held.has(tpKey(p.topic, p.partition)));
      this.#generation = generation;
      this.#held = next;
      this.#start(added, fetcher.add(added), sink, true);
      return;
    }
    this.#generation = generation;
    this.#held = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    this.#start(partitions, fetcher.assign(partitions), sink, false);
  }

  /** A rejoin failed for good (the client's `error` event): everything held is lost. */
  lose(): void {
    if (this.#generation === undefined) return;
    this.#in.fetcher()?.clear();
    this.#held = new Set();
    this.#generation = undefined;
    this.#in.sink()?.lost();
  }

  /** Ends the whole assignment before a join: an orderly revoke, or a loss. */
  async #end(orderly: boolean): Promise<void> {
    const sink = this.#in.sink();
    if (!sink) return;
    this.#in.fetcher()?.clear();
    if (orderly && !this.#in.closed()) await sink.revoking().catch(() => {});
    else sink.lost();
    this.#held = new Set();
    this.#generation = undefined;
  }

  async #beforeCooperativeJoin(): Promise<void> {
    if (this.#generation === undefined) return;
    const c = this.#in.consumer;
    const now = new Set<string>();
    for (const a of c.assignments ?? []) for (const partition of a.partitions) now.add(tpKey(a.topic, partition));
    const announced = this.#rebalancing;
    if (announced && c.memberId && c.generationId !== this.#generation) {
      // The revoke round: the client took a new assignment (generation) without the partitions that move.
      this.#generation = c.generationId;
      const gone = [...this.#held].filter((k) => !now.has(k)).map(fromKey);
      if (gone.length === 0) return;
      const sink = this.#in.sink();
      this.#in.fetcher()?.remove(gone);
      // still held while they drain and commit (the commits check it), then given up
      if (sink && !this.#in.closed()) await sink.revoking(gone).catch(() => {});
      else sink?.lost(gone);
      for (const p of gone) this.#held.delete(tpKey(p.topic, p.partition));
      return;
    }
    if (announced && c.memberId && now.size > 0) return; // a rebalance another member began: keep everything
    await this.#end(false); // the membership or the generation was lost
  }

  /** Reports `partitions` to the runner and positions them for the fetch loop. */
  #start(partitions: TopicPartition[], assignment: number, sink: ClientSink<PlatformaticMessage>, incremental: boolean): void {
    const { consumer, settings } = this.#in;
    const fetcher = this.#in.fetcher() as Fetcher;
    const committed: Promise<CommittedPosition[]> | undefined = partitions.length > 0 && !this.#in.stopped() && !this.#in.transactional
      ? committedWithRetries(consumer, partitions, this.#in.closed)
      : undefined;
    sink.assigned(partitions, committed, incremental);
    if (!committed) return;
    void startPositions(consumer, partitions, committed, {
      fromBeginning: settings.fromBeginning,
      readCommitted: settings.readCommitted,
      live: () => !this.#in.closed() && fetcher.holds(assignment), // a revoke or a loss ends it
      failed: (error) => this.#in.unavailable(error),
      signal: sink.signal,
    }).then((positions) => positions && fetcher.positioned(assignment, positions));
  }
}

/** `topic`/`partition` from its `tpKey`. */
function fromKey(key: string): TopicPartition {
  const i = key.lastIndexOf("\u0000");
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

/**
 * The cooperative subscription's user data: the generation of the partitions it owns, as
 * the client writes it itself when no hook is set (read by the assignor for subscriptions
 * before version 2, which carry no generation of their own), -1 when it owns none.
 */
function generationData(consumer: ClientConsumer, owns: boolean): Buffer {
  const data = Buffer.alloc(4);
  data.writeInt32BE(consumer.memberId && owns ? consumer.generationId : -1);
  return data;
}
