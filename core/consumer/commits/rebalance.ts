/**
 * Rebalances: the client's `assigned`, `revoking` and `lost`. A new tracker for every new
 * assignment; an orderly revoke stops dispatching, drains within `drainTimeoutMs`, commits
 * best-effort, then revokes the trackers; lost partitions are loss of authority, never
 * committed. Records of an ended assignment that finish later are rejected by its
 * revoked tracker, never counted in a later one.
 *
 * @module
 */
import type { CommittedPosition, TopicPartition } from "../port/mod.ts";
import type { Claims } from "./claims.ts";
import type { CommitScheduler } from "./commit_scheduler.ts";
import type { Dispatcher, Lane } from "../dispatch/mod.ts";
import type { ExactlyOnce } from "./exactly_once.ts";
import type { ConsumerLife } from "../port/mod.ts";
import { tpKey } from "../dispatch/mod.ts";
import { sleep } from "../port/mod.ts";
import type { StallGuard } from "./stall.ts";
import { describe, InvalidArgumentError } from "../../errors.ts";
import type { Frontier, PartitionCommit } from "../../tracker/frontier.ts";

/** What is wrong with an assignment (as "`assigned()` takes …"), or `undefined` when every partition is valid and listed once. */
function assignmentProblem(partitions: readonly TopicPartition[]): string | undefined {
  const listed = new Set<string>();
  if (!Array.isArray(partitions)) return `an array of partitions; got ${describe(partitions)}`;
  for (const p of partitions as readonly Partial<TopicPartition>[]) {
    const { topic, partition } = p ?? {};
    if (typeof topic !== "string" || topic.length === 0) return `topic names; got ${describe(topic)}`;
    if (typeof partition !== "number" || !Number.isInteger(partition) || partition < 0 || partition > 2147483647) {
      return `partitions in [0, 2^31); got ${describe(partition)} for topic ${JSON.stringify(topic)}`;
    }
    const key = tpKey(topic, partition);
    if (listed.has(key)) return `each partition once; got topic ${JSON.stringify(topic)} partition ${partition} twice`;
    listed.add(key);
  }
  return undefined;
}

/** What a {@link Rebalance} reads and drives. */
export interface RebalanceInputs<M> {
  /** The lanes of the assignment. */
  readonly dispatcher: Dispatcher<M>;
  /** One tracker per partition assignment. */
  readonly frontier: Frontier;
  /** Commits what is safe on a revoke; takes the final commits of kept partitions. */
  readonly scheduler: CommitScheduler;
  /** Reads the claims of new lanes. */
  readonly claims: Claims<M>;
  /** Restarts its clock on a new assignment. */
  readonly stall: StallGuard;
  /** New lanes drain at once while the consumer stops. */
  readonly life: ConsumerLife;
  /** Exactly-once mode: every assignment fences anew; ended partitions release their producers. */
  readonly tx: ExactlyOnce<M> | undefined;
  /** Commits carry completed sets: the committed metadata of new lanes is read. */
  readonly completedSets: boolean;
  /** Orderly revoke: how long running records may take before the final commit. */
  readonly drainMs: number;
}

/** Applies the client's rebalance events to the lanes and trackers. */
export class Rebalance<M> {
  readonly #in: RebalanceInputs<M>;
  #orderly = false; // an orderly revoke began and no new assignment came yet

  /**
   * Rebalances over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: RebalanceInputs<M>) {
    this.#in = inputs;
  }

  /**
   * A new assignment (the client sink's `assigned`); `incremental`: cooperative, only new
   * partitions get a lane. Validated whole before anything changes.
   * @throws {InvalidArgumentError} for a bad or repeated partition (the assignment is unchanged)
   */
  assigned(partitions: readonly TopicPartition[], committed?: Promise<readonly CommittedPosition[]>, incremental = false): void {
    const { dispatcher, frontier, scheduler, claims, stall, life, tx } = this.#in;
    // Validated whole before anything changes: a bad or repeated partition leaves the old assignment as it was.
    const bad = assignmentProblem(partitions);
    if (bad !== undefined) {
      void committed?.catch(() => {}); // not used: no unhandled rejection
      throw new InvalidArgumentError(`assigned() takes ${bad}; the assignment is unchanged`);
    }
    if (incremental) {
      // Cooperative: the lanes already assigned carry on; only new partitions get a lane.
      partitions = partitions.filter((p) => dispatcher.lane(p.topic, p.partition) === undefined);
      if (partitions.length === 0) {
        tx?.joined(); // a new generation: the reset lanes it kept are ours
        void committed?.catch(() => {});
        return;
      }
    }
    const keep = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
    const finals: PartitionCommit[] = [];
    if (tx && !incremental) {
      const gone = [...dispatcher.lanes()].filter((l) => !keep.has(tpKey(l.topic, l.partition)));
      if (gone.length > 0) tx.release(gone);
    }
    for (const lane of incremental ? [] : [...dispatcher.lanes()]) {
      // Still ours after an orderly revoke: its final commit is legitimate. Anything else: lost.
      if (this.#orderly && keep.has(tpKey(lane.topic, lane.partition))) {
        const f = frontier.revoke(lane.topic, lane.partition);
        if (f && !tx) finals.push(f); // transactional: the revoke's flush was the final transaction
      } else {
        frontier.lose(lane.topic, lane.partition);
      }
      dispatcher.removeLane(lane);
    }
    this.#orderly = false;
    if (!incremental) {
      // A new assignment starts with nothing at risk: what the old one finished is committed or gone.
      stall.newAssignment();
    }
    const lanes: Lane<M>[] = [];
    for (const { topic, partition } of partitions) {
      const tracker = frontier.assign(topic, partition);
      const lane = dispatcher.addLane(topic, partition, tracker);
      if (life.state === "stopping" || life.state === "stopped") dispatcher.stopLane(lane, "draining");
      lanes.push(lane);
    }
    scheduler.addFinal(finals);
    if (tx) {
      tx.stage.prune((l) => l.ended); // what ended assignments staged: never committed, redone
      tx.joined(); // reset lanes this assignment kept (incremental) are ours in the new generation
      void committed?.catch(() => {}); // read again after fencing
      // Every assignment fences anew, kept partitions too: the client does not say which
      // generation this is, so a member that owned a partition in between (a zombie now)
      // may hold a newer producer epoch than ours.
      tx.open(lanes, new Map());
    } else if (committed !== undefined && this.#in.completedSets && lanes.length > 0) {
      claims.read(lanes, committed);
    } else {
      void committed?.catch(() => {}); // not used: no unhandled rejection
      // Nothing to read: what this consumer finished in its own last assignment still counts.
      claims.recallOwn(lanes);
    }
  }

  /**
   * An orderly revoke (the client sink's `revoking`) of `partitions` (all when absent): stop
   * dispatching, drain within the bound, commit. Partitions the client names end now.
   * `awaited` false (the client rejoins at once): nothing queued starts, retries included;
   * only the running records finish (see {@link ClientSink.revoking}).
   */
  async revoking(partitions?: readonly TopicPartition[], awaited = true): Promise<void> {
    const { dispatcher, frontier, scheduler, tx, drainMs } = this.#in;
    this.#orderly = true;
    const lanes = partitions
      ? partitions.map((p) => dispatcher.lane(p.topic, p.partition)).filter((l): l is Lane<M> => !!l)
      : [...dispatcher.lanes()];
    const until = awaited ? Date.now() + drainMs : 0; // 0: no time left to retry in
    for (const lane of lanes) dispatcher.stopLane(lane, "draining", until, awaited);
    dispatcher.pump();
    // Commit what is safe right now, synchronously when no commit is in flight: a client
    // that rejoins at once (KafkaJS) then sends it ahead of its JoinGroup, while the old
    // generation still may commit. The commit after the drain is best-effort.
    const early = scheduler.urgent();
    const bound = sleep(drainMs);
    await Promise.race([Promise.all(lanes.map((l) => l.idle())), bound.promise]);
    bound.cancel();
    // Past the bound, what still runs is redone by the next owner: its completions no longer
    // count (as after the shutdown grace), and its handlers are told now, not when the next
    // assignment arrives, so one that stops early writes nothing late.
    for (const lane of lanes) {
      if (!lane.isIdle && !lane.controller.signal.aborted) {
        lane.abandoned = true;
        lane.controller.abort(new Error(`partition ${lane.topic}/${lane.partition} is being revoked: drain bound of ${drainMs} ms expired`));
      }
    }
    await early;
    await scheduler.flush();
    if (partitions) {
      // A client that names the revoked partitions (cooperative): end them now.
      const finals: PartitionCommit[] = [];
      const ended: Lane<M>[] = [];
      for (const lane of lanes) {
        // Ended during the drain (lost, reset or replaced): whoever ended it dealt with its
        // producer, and a lane assigned again meanwhile holds the partition's producer now.
        if (lane.ended) continue;
        const f = frontier.revoke(lane.topic, lane.partition);
        if (f && !tx) finals.push(f); // transactional: the flush above was the final transaction
        dispatcher.removeLane(lane);
        ended.push(lane);
      }
      if (tx && ended.length > 0) tx.release(ended);
      if (finals.length > 0) {
        scheduler.addFinal(finals);
        await scheduler.flush();
      }
    }
  }

  /** Lost partitions (the client sink's `lost`; all when absent): loss of authority, never committed. */
  lost(partitions?: readonly TopicPartition[]): void {
    const { dispatcher, frontier, tx } = this.#in;
    const lanes = partitions
      ? partitions.map((p) => dispatcher.lane(p.topic, p.partition)).filter((l): l is Lane<M> => !!l)
      : [...dispatcher.lanes()];
    for (const lane of lanes) {
      frontier.lose(lane.topic, lane.partition);
      dispatcher.removeLane(lane);
    }
    if (tx && lanes.length > 0) tx.release(lanes);
  }
}
