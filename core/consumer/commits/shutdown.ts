/**
 * The shutdown drain: stop fetching, let running records finish within the grace, commit
 * the safe positions, revoke every tracker, disconnect. What finishes after the grace is
 * not counted. While the stall guard holds dispatching (commits do not land) the drain
 * first commits, unless the cluster is reported out of reach; if the hold outlasts that, it
 * starts nothing: only the records running at the shutdown finish. During an outage the
 * final commit is tried again, with backoff, for what is left of the grace (at least
 * {@link FINAL_COMMIT_MIN_MS}); what it could not commit is reported as a
 * {@link ShutdownCommitError} (an `error` event of kind `commit`) naming each partition's
 * safe position and the last acknowledged one: the next owner redoes the records between them.
 *
 * @module
 */
import type { CommitOffset, ConsumerClient } from "../port/mod.ts";
import type { ClusterWatch } from "../port/mod.ts";
import type { CommitScheduler } from "./commit_scheduler.ts";
import type { Dispatcher } from "../dispatch/mod.ts";
import type { ExactlyOnce } from "./exactly_once.ts";
import type { EventHub } from "../port/mod.ts";
import { sleep } from "../port/mod.ts";
import type { StallGuard } from "./stall.ts";
import type { Frontier } from "../../tracker/frontier.ts";
import { ShutdownCommitError, type UncommittedPartition } from "../../errors.ts";

/** During an outage the final commit gets what is left of the grace, and at least this long. */
export const FINAL_COMMIT_MIN_MS = 1_000;

/** `work`'s outcome, or `"timeout"` once `until` (`Date.now()` ms) passed first. */
async function beforeDeadline<T>(work: Promise<T>, until: number): Promise<T | "timeout"> {
  const left = sleep(Math.max(0, until - Date.now()));
  try {
    return await Promise.race([work, left.promise]);
  } finally {
    left.cancel();
  }
}

/** What {@link drainAndClose} drives. */
export interface ShutdownInputs<M> {
  /** Stops fetching, takes the final commit, is closed. */
  readonly client: ConsumerClient<M>;
  /** Emits `error` (`client`, `commit`). */
  readonly events: EventHub;
  /** Its lanes drain, then it halts. */
  readonly dispatcher: Dispatcher<M>;
  /** Halted, then flushed. */
  readonly scheduler: CommitScheduler;
  /** Whether the cluster is unreachable (the commits are then bounded); closed at the end. */
  readonly watch: ClusterWatch;
  /** Every tracker is revoked; closed at the end. */
  readonly frontier: Frontier;
  /** Exactly-once mode: its producers are closed; what finished after the flush is redone. */
  readonly tx: ExactlyOnce<M> | undefined;
  /** Its periodic check ends. */
  readonly stall: StallGuard;
  /** Counts a failed final commit. */
  readonly commitFailed: () => void;
}

/**
 * Drains the consumer within `graceMs`, commits, and closes the client (errors are
 * reported as `error` events, never thrown). The caller moved the state to `stopping`.
 */
export async function drainAndClose<M>(inputs: ShutdownInputs<M>, graceMs: number): Promise<void> {
  const { client, events, dispatcher, scheduler, watch, frontier, tx } = inputs;
  try {
    client.stopFetching();
  } catch (error) {
    events.emit("error", { kind: "client", error });
  }
  const lanes = [...dispatcher.lanes()];
  const until = Date.now() + graceMs;
  for (const lane of lanes) dispatcher.stopLane(lane, "draining", until, true);
  // Held, the cluster not reported out of reach (acknowledgements late, a commit refused):
  // commit first, within the grace. An acknowledgement ends the hold (a loaded machine's late
  // commits) and the drain goes on as if unheld; nothing starts while it waits.
  if (dispatcher.held && !inputs.stall.outage) await beforeDeadline(scheduler.flush(), until);
  // Still held: what starts now could not be committed either, so only the running records
  // finish; the queued ones (those below the highest started offset and retries included)
  // are left to the next owner, never started here, and the grace goes to the final
  // commit's attempts instead.
  if (dispatcher.held) for (const lane of lanes) dispatcher.stopLane(lane, "draining", 0, false);
  dispatcher.pump(); // what the drain kept (records below the highest started offset, retries)
  const outcome = await beforeDeadline(Promise.all(lanes.map((l) => l.idle())), until);
  dispatcher.halt();
  if (outcome === "timeout") {
    // Whatever finishes from now on is not counted: the commit reflects the grace's end.
    for (const lane of lanes) lane.abandoned = true;
    for (const lane of lanes) lane.controller.abort(new Error("shutdown grace expired"));
  }
  scheduler.halt();
  // During an outage the last commits cannot be confirmed at once: they are tried again,
  // with backoff, for what is left of the grace (at least FINAL_COMMIT_MIN_MS, should the
  // cluster be back), then the shutdown goes on; nothing unacknowledged moves `confirmed`.
  const deadline = Math.max(until, Date.now() + FINAL_COMMIT_MIN_MS);
  const bounded = async <T>(work: Promise<T>): Promise<T | "timeout"> => watch.waiting ? await beforeDeadline(work, deadline) : await work;
  let attempts = 1;
  let flushed = await bounded(scheduler.flush());
  for (let delay = 100; flushed !== true && watch.waiting && Date.now() + delay < deadline; delay = Math.min(1_000, 2 * delay)) {
    const wait = sleep(delay);
    await wait.promise;
    attempts++;
    flushed = await bounded(scheduler.flush());
  }
  // Where each partition got to, before its tracker goes: what the report names.
  const positions = new Map<string, UncommittedPartition>();
  for (const lane of dispatcher.lanes()) {
    const p = frontier.positions(lane.topic, lane.partition);
    if (p?.safe !== undefined) {
      positions.set(`${lane.topic}\u0000${lane.partition}`, { topic: lane.topic, partition: lane.partition, safe: p.safe, confirmed: p.confirmed });
    }
  }
  const finals: CommitOffset[] = [];
  for (const lane of [...dispatcher.lanes()]) {
    const f = frontier.revoke(lane.topic, lane.partition);
    if (f && !tx) finals.push(f); // transactional: what finished after the flush is redone
    dispatcher.removeLane(lane);
  }
  if (tx) await tx.port.close().catch((error: unknown) => events.emit("error", { kind: "client", error }));
  let finalsError: unknown;
  let finalsOk = finals.length === 0;
  if (finals.length > 0) {
    // Completions that landed after the flush (none unless a handler ignored the grace).
    attempts++;
    finalsOk = (await bounded(client.commit(finals).then(() => true, (error: unknown) => {
      finalsError = error;
      inputs.commitFailed();
      events.emit("error", { kind: "commit", error });
      return false;
    }))) === true;
    if (finalsOk) for (const f of finals) positions.delete(`${f.topic}\u0000${f.partition}`);
  }
  if (!tx && (flushed !== true || !finalsOk)) {
    // Said plainly: which partitions stay where, and so what the next owner redoes.
    const left = [...positions.values()].filter((p) => p.safe !== p.confirmed);
    if (left.length > 0) {
      events.emit("error", { kind: "commit", error: new ShutdownCommitError(left, attempts, finalsError) });
    }
  }
  inputs.stall.stop();
  watch.close();
  frontier.close();
  try {
    await client.close();
  } catch (error) {
    events.emit("error", { kind: "client", error });
  }
}
