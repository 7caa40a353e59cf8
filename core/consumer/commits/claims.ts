/**
 * The handover: what earlier owners of a partition finished beyond its committed offset.
 * A new lane is held (paused, no batch taken) until its claim is known: the completed set
 * decoded from the committed offset's metadata, joined with what this consumer finished
 * in its own last assignment of the partition. Records a claim calls finished are then
 * skipped (see `Delivery`). A string that cannot be verified is ignored, never trusted.
 *
 * @module
 */
import type { CommittedPosition, ConsumerClient } from "../port/mod.ts";
import type { Lane } from "../dispatch/mod.ts";
import type { ConsumerLife } from "../port/mod.ts";
import type { EventHub } from "../port/mod.ts";
import { tpKey } from "../dispatch/mod.ts";
import { sleep } from "../port/mod.ts";
import { type CompletedSet, decodeCompletedSet, unionOfClaims } from "../../tracker/completed_set/mod.ts";
import type { Frontier } from "../../tracker/frontier.ts";

/** What {@link Claims} reads and drives. */
export interface ClaimInputs<M> {
  /** Takes the claims (`inherit`) and recalls this consumer's own. */
  readonly frontier: Frontier;
  /** Held lanes are paused and resumed here. */
  readonly client: Pick<ConsumerClient<M>, "pause" | "resume">;
  /** Emits `claim` and `error` (`committed-read`). */
  readonly events: EventHub;
  /** A held lane resumes only while the consumer is live. */
  readonly life: ConsumerLife;
  /** Exactly-once mode: only a committed transaction proves a record's outputs exist, so this consumer's own memory is not used. */
  readonly transactional: boolean;
}

/**
 * How long a read of the committed offsets at assignment may take before the lanes run
 * without the earlier owners' claims (records redone, never skipped): a read that hangs (a
 * coordinator still loading its offsets) costs the claims, not the partition. A client
 * binding that waits for the same read (e.g. to hand its answer to the client as start
 * positions) derives its wait from this bound and never waits less.
 */
export const CLAIM_READ_MS = 5_000;

/** Reads the claims of new lanes and holds them until they are known. */
export class Claims<M> {
  readonly #in: ClaimInputs<M>;

  /**
   * Claims over `inputs`.
   * @param inputs what it reads and drives
   */
  constructor(inputs: ClaimInputs<M>) {
    this.#in = inputs;
  }

  /** Holds `lanes` (paused at the client, no batch taken) until {@link release}. */
  hold(lanes: readonly Lane<M>[]): void {
    for (const lane of lanes) lane.held = true;
    this.#in.client.pause(lanes);
  }

  /**
   * Holds `lanes` until `committed` (their committed offsets and metadata) is read, then
   * decodes their claims ({@link decode}). A read that fails, or takes longer than the
   * bound, leaves this consumer's own memory as the only claim, and releases them; an
   * answer after the bound is not used (a record may already have run).
   */
  read(lanes: readonly Lane<M>[], committed: Promise<readonly CommittedPosition[]>): void {
    // Held until the claims are read: no batch is registered before its claim is known.
    this.hold(lanes);
    const bound = sleep(CLAIM_READ_MS);
    const read = Promise.race([
      committed,
      bound.promise.then((): never => {
        throw new Error(`the committed offsets were not read within ${CLAIM_READ_MS} ms`);
      }),
    ]);
    void read.then(bound.cancel, bound.cancel);
    void committed.catch(() => {}); // a rejection after the bound: not used
    read.then(
      (positions) => this.decode(lanes, positions),
      (error: unknown) => {
        // Only lanes still waiting for it care (a revoke may have ended them meanwhile).
        if (lanes.every((l) => l.ended || !l.held)) return;
        this.#in.events.emit("error", { kind: "committed-read", error });
        for (const lane of lanes) {
          const mine = lane.ended ? undefined : this.#in.frontier.recall(lane.topic, lane.partition);
          if (mine !== undefined) this.#use(lane, mine);
        }
        this.release(lanes);
      },
    );
  }

  /** Nothing to read: what this consumer finished in its own last assignment of each partition still counts. */
  recallOwn(lanes: readonly Lane<M>[]): void {
    for (const lane of lanes) {
      const mine = this.#in.frontier.recall(lane.topic, lane.partition);
      if (mine !== undefined) this.#use(lane, mine);
    }
  }

  /** Decodes each held lane's committed metadata into its claim, then releases the lanes. */
  decode(lanes: readonly Lane<M>[], positions: readonly CommittedPosition[]): void {
    const { frontier, events, transactional } = this.#in;
    const byKey = new Map(positions.map((p) => [tpKey(p.topic, p.partition), p]));
    for (const lane of lanes) {
      if (lane.ended) continue;
      const p = byKey.get(tpKey(lane.topic, lane.partition));
      const offset = p?.offset;
      let claim: CompletedSet | undefined;
      let ignored: string | undefined;
      if (offset === undefined) ignored = "no committed offset";
      else {
        const r = decodeCompletedSet(lane.topic, lane.partition, offset, p?.metadata);
        if (r.ok) claim = r.set;
        else ignored = r.reason;
      }
      // Transactional: only a committed transaction proves a record's outputs exist.
      const mine = transactional ? undefined : frontier.recall(lane.topic, lane.partition, offset);
      const known = claim !== undefined && mine !== undefined ? unionOfClaims(claim, mine) : claim ?? mine;
      if (known !== undefined) this.#use(lane, known);
      if (events.has("claim")) {
        events.emit("claim", {
          topic: lane.topic,
          partition: lane.partition,
          offset,
          finished: claim?.finishedCount() ?? 0,
          end: claim?.end,
          ...(ignored !== undefined ? { ignored } : {}),
        });
      }
    }
    this.release(lanes);
  }

  /** Ends the hold of lanes whose claims are known; fetching resumes unless something else pauses them. */
  release(lanes: readonly Lane<M>[]): void {
    const resume: Lane<M>[] = [];
    for (const lane of lanes) {
      if (lane.ended || !lane.held) continue;
      lane.held = false;
      if (!lane.paused && !lane.userPaused && lane.state === "active") resume.push(lane);
    }
    if (resume.length > 0 && this.#in.life.live) this.#in.client.resume(resume);
  }

  #use(lane: Lane<M>, claim: CompletedSet): void {
    lane.claim = claim;
    this.#in.frontier.inherit(lane.topic, lane.partition, claim);
  }
}
