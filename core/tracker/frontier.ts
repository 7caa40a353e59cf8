/**
 * The frontier: every partition assignment of one consumer, and the commits they
 * justify. It proposes only safe positions, only for assigned partitions, and
 * moves `confirmed` only when the broker acknowledged. Each proposed commit carries the
 * partition's completed set (which delivered records above the safe position are
 * finished, see completed_set.ts) as its metadata, so the next owner of the partition
 * skips them instead of redoing them.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../errors.ts";
import { CompletedSet, DEFAULT_BUDGET, encodeCompletedSet, MAX_METADATA_LENGTH, unionOfClaims } from "./completed_set/mod.ts";
import type { OffsetInput } from "./offset.ts";
import { Tracker, type TrackerOptions, type TrackerStats } from "./tracker.ts";

/** Options of a {@link Frontier}: tracker options shared by every partition, and the completed sets. */
export interface FrontierOptions extends Omit<TrackerOptions, "start"> {
  /**
   * Completed sets in the commit metadata: `{ budget }` caps each partition's metadata
   * string (an integer in [16, 65,536]; default 4,096 characters, the broker's
   * `offset.metadata.max.bytes`); over it the longest prefix that fits is kept. `false`:
   * commits carry no metadata. Default on.
   */
  completedSet?: { budget?: number } | false;
}

/** One partition's commit: `offset` is the next offset to read (the safe position). */
export interface PartitionCommit {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
  /** The safe position to commit. */
  readonly offset: number;
  /** The completed set above `offset`, encoded for the commit's metadata (absent when none is finished). */
  readonly metadata?: string;
}

/** A commit to send; pass it back to {@link Frontier.confirm} or {@link Frontier.fail}. */
export interface CommitProposal {
  /** Identifies the proposal among those in flight. */
  readonly id: number;
  /**
   * Partitions whose safe position moved past their last confirmed or in-flight commit, or
   * (with completed sets) whose set of finished records above it grew since.
   */
  readonly offsets: readonly PartitionCommit[];
}

/** The three positions of a partition, never mixed up. */
export interface PartitionPositions {
  /** Where delivery has reached. */
  delivered: number | undefined;
  /** The resume position justified by completed work. */
  safe: number | undefined;
  /** The last offset the broker acknowledged in a commit during this assignment. */
  confirmed: number | undefined;
  /** The offset of a commit sent and not answered yet. */
  inflight: number | undefined;
}

/** {@link TrackerStats} of one partition plus its commit positions. */
export interface PartitionStats extends TrackerStats {
  /** Topic name. */
  topic: string;
  /** Partition number. */
  partition: number;
  /** Last acknowledged commit of this assignment. */
  confirmed: number | undefined;
  /** Commit in flight. */
  inflight: number | undefined;
}

/** The smallest completed-set budget a frontier takes (characters): below it hardly any claim fits. */
const MIN_BUDGET = 16;

interface Assignment {
  readonly tracker: Tracker;
  confirmed: number | undefined;
  inflight: number | undefined;
  inflightId: number;
  /** The tracker's blocked count when the last commit (in flight or acknowledged) was proposed; -1 after a failure. */
  sentBlocked: number;
  /** What an earlier owner's commit claimed finished (read back at assignment), while it reaches past delivery. */
  claim: CompletedSet | undefined;
}

/**
 * Per-partition trackers of one consumer and the commit protocol around them.
 *
 * @example
 * ```ts
 * import { Frontier } from "offset-frontier/tracker";
 * const f = new Frontier({ engine: "js" });
 * const t = f.assign("orders", 0, 40);
 * const h = t.register([40, 41], 42);
 * t.complete(h);
 * const p = f.propose(); // { id: 1, offsets: [{ topic: "orders", partition: 0, offset: 41 }] }
 * // ... await consumer.commitOffsets(...) ...
 * if (p) f.confirm(p); // confirmed = 41
 * ```
 */
export class Frontier {
  readonly #options: Omit<TrackerOptions, "start">;
  readonly #budget: number; // 0: no completed sets
  #runs = new Float64Array(0); // scratch: unfinished runs of the partition being encoded
  readonly #memory = new Map<string, CompletedSet>(); // what ended assignments finished, by topic\0partition
  readonly #topics = new Map<string, Map<number, Assignment>>();
  readonly #outstanding = new Map<number, Assignment[]>(); // proposal id → the assignments it was made for
  #nextId = 1;

  /**
   * A frontier with no assignment yet.
   * @param options tracker options shared by every partition (capacity, engine, clock) and the completed sets
   * @throws {InvalidArgumentError} for a completed-set budget that is not an integer in [16, 65,536] (nothing is created)
   */
  constructor(options: FrontierOptions = {}) {
    const { completedSet, ...trackerOptions } = options;
    this.#options = trackerOptions;
    if (completedSet === false) this.#budget = 0;
    else {
      const budget = completedSet?.budget ?? DEFAULT_BUDGET;
      // checked here, where it is given: the encoder would refuse it at every propose()
      if (!Number.isSafeInteger(budget) || budget < MIN_BUDGET || budget > MAX_METADATA_LENGTH) {
        throw new InvalidArgumentError(
          `completedSet.budget must be an integer in [${MIN_BUDGET}, ${MAX_METADATA_LENGTH}] (characters); got ${describe(budget)}`,
        );
      }
      this.#budget = budget;
    }
  }

  /**
   * Starts a new assignment of a partition with a fresh tracker. An existing
   * assignment of it is lost (revoked without a commit): its handles are never
   * accepted by the new tracker.
   * @param start the safe position before any batch (e.g. the committed offset), if known
   */
  assign(topic: string, partition: number, start?: OffsetInput): Tracker {
    checkPartition(topic, partition);
    const tracker = new Tracker({ ...this.#options, start });
    let partitions = this.#topics.get(topic);
    if (!partitions) this.#topics.set(topic, partitions = new Map());
    partitions.get(partition)?.tracker.revoke();
    partitions.set(partition, { tracker, confirmed: undefined, inflight: undefined, inflightId: 0, sentBlocked: 0, claim: undefined });
    return tracker;
  }

  /**
   * Hands an assigned partition what an earlier owner's commit claimed finished (decoded
   * from the committed metadata with {@link decodeCompletedSet}). The caller completes
   * delivered records the claim covers without running them; this frontier carries the
   * part of the claim beyond delivery into its own commits, so it survives a further
   * handover before those records arrive.
   */
  inherit(topic: string, partition: number, claim: CompletedSet): void {
    const a = this.#topics.get(topic)?.get(partition);
    if (a) a.claim = claim;
  }

  /** The tracker of a currently assigned partition. */
  tracker(topic: string, partition: number): Tracker | undefined {
    return this.#topics.get(topic)?.get(partition)?.tracker;
  }

  /** The partitions currently assigned. */
  assigned(): Array<{ topic: string; partition: number }> {
    const out: Array<{ topic: string; partition: number }> = [];
    for (const [topic, partitions] of this.#topics) for (const partition of partitions.keys()) out.push({ topic, partition });
    return out;
  }

  /**
   * Orderly revoke: returns the partition's final commit (when its safe position moved
   * past the last confirmed or in-flight commit), then ends the assignment. The caller
   * sends that commit while it still owns the partition.
   */
  revoke(topic: string, partition: number): PartitionCommit | undefined {
    const a = this.#topics.get(topic)?.get(partition);
    if (!a) return undefined;
    const safe = a.tracker.safe;
    const commit = safe !== undefined && this.#moved(a, safe) ? this.#commit(topic, partition, a, safe) : undefined;
    this.#remember(topic, partition, a); // the final commit may not land (a client that rejoined already)
    this.#drop(topic, partition, a);
    return commit;
  }

  /** Loss of authority (e.g. the session timed out): ends the assignment without any commit. */
  lose(topic: string, partition: number): void {
    const a = this.#topics.get(topic)?.get(partition);
    if (!a) return;
    this.#remember(topic, partition, a);
    this.#drop(topic, partition, a);
  }

  /**
   * What this consumer itself finished in the last ended assignment of a partition (lost,
   * or revoked while its final commit may not have landed): finished records are a fact
   * whoever commits them, so a later assignment of the same partition may skip them.
   * Forgotten once read. `committed`, when known: the partition's committed offset now; a
   * memory it has passed, or that lies above it (the offset was reset), is dropped.
   */
  recall(topic: string, partition: number, committed?: number): CompletedSet | undefined {
    const key = `${topic}\u0000${partition}`;
    const m = this.#memory.get(key);
    if (m === undefined) return undefined;
    this.#memory.delete(key);
    if (committed !== undefined && (committed < m.base || committed >= m.end)) return undefined;
    return m;
  }

  /** Keeps what an ending assignment finished beyond its last acknowledged commit (see {@link recall}). */
  #remember(topic: string, partition: number, a: Assignment): void {
    const t = a.tracker;
    const safe = t.safe, delivered = t.delivered;
    if (safe === undefined || delivered === undefined) return;
    const base = Math.min(a.confirmed ?? t.origin ?? safe, safe); // all finished from base to safe
    if (base === safe && t.blocked === 0 && a.claim === undefined) return; // nothing past the commit
    const maxRuns = Math.ceil(Math.max(this.#budget, DEFAULT_BUDGET) * 3.5) + 1;
    const runs = new Float64Array(2 * maxRuns);
    const n = t.unfinishedRuns(runs, maxRuns);
    const end = n === maxRuns ? runs[2 * n - 2] + runs[2 * n - 1] : delivered;
    let set = new CompletedSet(base, Math.max(base, end), runs.slice(0, 2 * n), n);
    if (a.claim !== undefined && a.claim.end > delivered && n < maxRuns) set = unionOfClaims(set, a.claim);
    this.#memory.set(`${topic}\u0000${partition}`, set);
  }

  /**
   * Proposes a commit of every assigned partition (or those `include` accepts) whose
   * safe position moved past its last confirmed or in-flight commit, and marks those
   * in flight. `undefined` when nothing moved.
   */
  propose(include?: (topic: string, partition: number) => boolean): CommitProposal | undefined {
    const id = this.#nextId;
    const offsets: PartitionCommit[] = [];
    const made: Assignment[] = [];
    for (const [topic, partitions] of this.#topics) {
      for (const [partition, a] of partitions) {
        const safe = a.tracker.safe;
        if (safe === undefined || !this.#moved(a, safe)) continue;
        if (include && !include(topic, partition)) continue;
        a.inflight = safe;
        a.inflightId = id;
        a.sentBlocked = a.tracker.blocked;
        offsets.push(this.#commit(topic, partition, a, safe));
        made.push(a);
      }
    }
    if (offsets.length === 0) return undefined;
    this.#nextId++;
    this.#outstanding.set(id, made);
    return { id, offsets };
  }

  /**
   * The broker acknowledged the proposal: `confirmed` moves for the partitions whose
   * assignment is still the one the proposal was made for. Call exactly one of
   * `confirm` and `fail` per proposal.
   */
  confirm(proposal: CommitProposal): void {
    this.#settle(proposal, true);
  }

  /** The commit failed or its outcome is unknown: nothing moves; its partitions may be proposed again. */
  fail(proposal: CommitProposal): void {
    this.#settle(proposal, false);
  }

  #settle(proposal: CommitProposal, acknowledged: boolean): void {
    const made = this.#outstanding.get(proposal.id);
    if (!made) return;
    this.#outstanding.delete(proposal.id);
    proposal.offsets.forEach(({ topic, partition, offset }, i) => {
      const a = made[i];
      if (this.#topics.get(topic)?.get(partition) !== a) return; // reassigned or revoked since
      if (acknowledged && (a.confirmed === undefined || offset > a.confirmed)) a.confirmed = offset;
      if (!acknowledged && a.inflightId === proposal.id) a.sentBlocked = -1; // its completed set is proposed again
      if (a.inflightId === proposal.id) {
        a.inflight = undefined;
        a.inflightId = 0;
      }
    });
  }

  /** The delivered, safe, confirmed and in-flight positions of an assigned partition. */
  positions(topic: string, partition: number): PartitionPositions | undefined {
    const a = this.#topics.get(topic)?.get(partition);
    if (!a) return undefined;
    return { delivered: a.tracker.delivered, safe: a.tracker.safe, confirmed: a.confirmed, inflight: a.inflight };
  }

  /** Stats of every assigned partition. */
  stats(): PartitionStats[] {
    const out: PartitionStats[] = [];
    for (const [topic, partitions] of this.#topics) {
      for (const [partition, a] of partitions) {
        out.push({ topic, partition, ...a.tracker.stats(), confirmed: a.confirmed, inflight: a.inflight });
      }
    }
    return out;
  }

  /** Loses every assignment (no commits), frees all trackers and forgets every memory. */
  close(): void {
    this.#memory.clear();
    for (const [topic, partitions] of this.#topics) for (const [partition, a] of partitions) this.#drop(topic, partition, a);
  }

  /**
   * Whether a commit of `safe` says something new: the safe position passed the last
   * confirmed or in-flight commit, or (with completed sets) records above it finished since.
   */
  #moved(a: Assignment, safe: number): boolean {
    const f = floor(a);
    if (safe > f) return true;
    return this.#budget > 0 && safe === f && a.tracker.blocked !== a.sentBlocked;
  }

  /** The commit of `safe` with its completed set: the tracker's unfinished runs, then the inherited claim past delivery. */
  #commit(topic: string, partition: number, a: Assignment, safe: number): PartitionCommit {
    if (this.#budget === 0) return { topic, partition, offset: safe };
    const t = a.tracker;
    const delivered = t.delivered ?? safe;
    if (a.claim !== undefined && a.claim.end <= delivered) a.claim = undefined; // all of it delivered and applied
    if (safe >= delivered && a.claim === undefined) return { topic, partition, offset: safe };
    // A run costs at least 2 bits of a ~6.5-bit character, so more than this many never fit.
    const maxRuns = Math.ceil(this.#budget * 3.5) + 1;
    if (this.#runs.length < 2 * maxRuns) this.#runs = new Float64Array(2 * maxRuns);
    const runs = this.#runs;
    let n = t.unfinishedRuns(runs, maxRuns);
    let end = n === maxRuns ? runs[2 * n - 2] + runs[2 * n - 1] : delivered; // truncated: unknown past the last run
    if (n < maxRuns && a.claim !== undefined && a.claim.end > delivered) {
      const n0 = n;
      n += a.claim.unfinishedRuns(delivered, runs.subarray(2 * n0), maxRuns - n0);
      end = n === maxRuns ? runs[2 * n - 2] + runs[2 * n - 1] : a.claim.end;
      if (n0 > 0 && n > n0 && runs[2 * n0] === runs[2 * n0 - 2] + runs[2 * n0 - 1]) {
        // the tracker's last unfinished run touches the claim's first: one run
        runs[2 * n0 - 1] += runs[2 * n0 + 1];
        runs.copyWithin(2 * n0, 2 * n0 + 2, 2 * n);
        n--;
      }
    }
    const encoded = encodeCompletedSet(topic, partition, { base: safe, end, runs, count: n }, { budget: this.#budget });
    return encoded === undefined ? { topic, partition, offset: safe } : { topic, partition, offset: safe, metadata: encoded.metadata };
  }

  #drop(topic: string, partition: number, a: Assignment): void {
    a.tracker.revoke();
    const partitions = this.#topics.get(topic);
    partitions?.delete(partition);
    if (partitions?.size === 0) this.#topics.delete(topic);
  }
}

function floor(a: Assignment): number {
  return Math.max(a.confirmed ?? -1, a.inflight ?? -1);
}

function checkPartition(topic: string, partition: number): void {
  if (typeof topic !== "string" || topic.length === 0) {
    throw new InvalidArgumentError(`topic must be a non-empty string; got ${describe(topic)}`);
  }
  if (!Number.isInteger(partition) || partition < 0 || partition > 2147483647) {
    throw new InvalidArgumentError(`partition must be an integer in [0, 2^31); got ${describe(partition)}`);
  }
}
