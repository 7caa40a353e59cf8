/**
 * The shutdown drain: stop fetching, let running records finish within the grace, commit
 * the safe positions, revoke every tracker, disconnect. What finishes after the grace is
 * not counted; during an outage the last commits are bounded by what is left of the grace.
 *
 * @module
 */
import type { CommitOffset, ConsumerClient } from "./client.ts";
import type { ClusterWatch } from "./cluster.ts";
import type { CommitScheduler } from "./commit_scheduler.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { ExactlyOnce } from "./exactly_once.ts";
import type { EventHub } from "./metrics.ts";
import { sleep } from "./sleep.ts";
import type { StallGuard } from "./stall.ts";
import type { Frontier } from "../tracker/frontier.ts";

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
  for (const lane of lanes) dispatcher.stopLane(lane, "draining", until);
  dispatcher.pump(); // what the drain kept (records below the highest started offset)
  const grace = sleep(graceMs);
  const outcome = await Promise.race([Promise.all(lanes.map((l) => l.idle())), grace.promise]);
  grace.cancel();
  dispatcher.halt();
  if (outcome === "timeout") {
    // Whatever finishes from now on is not counted: the commit reflects the grace's end.
    for (const lane of lanes) lane.abandoned = true;
    for (const lane of lanes) lane.controller.abort(new Error("shutdown grace expired"));
  }
  scheduler.halt();
  // During an outage the last commits cannot be confirmed in time: they get what is left of
  // the grace (at least a second, should the cluster be back), then the shutdown goes on;
  // nothing unacknowledged moves `confirmed`.
  const bounded = <T>(work: Promise<T>): Promise<unknown> => {
    if (!watch.waiting) return work;
    const left = sleep(Math.max(1_000, until - Date.now()));
    return Promise.race([work, left.promise]).finally(() => left.cancel());
  };
  await bounded(scheduler.flush());
  const finals: CommitOffset[] = [];
  for (const lane of [...dispatcher.lanes()]) {
    const f = frontier.revoke(lane.topic, lane.partition);
    if (f && !tx) finals.push(f); // transactional: what finished after the flush is redone
    dispatcher.removeLane(lane);
  }
  if (tx) await tx.port.close().catch((error: unknown) => events.emit("error", { kind: "client", error }));
  if (finals.length > 0) {
    // Completions that landed after the flush (none unless a handler ignored the grace).
    await bounded(client.commit(finals).catch((error: unknown) => {
      inputs.commitFailed();
      events.emit("error", { kind: "commit", error });
    }));
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
