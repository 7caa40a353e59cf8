/**
 * How a lane stops dispatching (a revoke's or a shutdown's drain, or a record failed for
 * good): its drain deadline, what a stop drops and what it keeps, and the retry waits that
 * the deadline bounds. The dispatcher's side of a drain; it starts nothing itself.
 *
 * Invariant: what a draining lane still runs is below the highest offset it started (plus
 * retries, which fire before the deadline), so that what completes is a prefix and the
 * final commit covers it. Dropped records stay pending in the tracker.
 *
 * @module
 */
import type { Ordering } from "./dispatch_options.ts";
import { cutChain } from "./key_chains.ts";
import type { Lane } from "./lane.ts";
import type { Work } from "./work.ts";

/** A retry delay that leaves a draining lane half of what is left for the attempt itself. */
function retryRoom(left: number): number {
  return left === Infinity ? left : Math.max(0, Math.floor(left / 2));
}

/**
 * Milliseconds left of a draining lane's deadline (≤ 0: none left, or the lane is stopped
 * or ended); `Infinity` for an active lane.
 */
export function drainLeft<M>(lane: Lane<M>): number {
  if (lane.ended || lane.state === "stopped") return 0;
  if (lane.state === "active") return Infinity;
  return lane.drainUntil - Date.now();
}

/**
 * Frees the in-flight slot of a record that will not run again here and, under `key`
 * ordering, takes its key: the later records of that key (set aside behind it, or still in
 * the lane's `ready`) must not overtake it. Returns those records.
 */
export function abandonWork<M>(work: Work<M, Lane<M>>, ordering: Ordering): Work<M, Lane<M>>[] {
  const lane = work.lane;
  lane.inFlight--;
  work.finished = true;
  if (work.keyHash < 0 || ordering !== "key" || !lane.keys.delete(work)) return [];
  const dropped: Work<M, Lane<M>>[] = [];
  cutChain(lane, work, -1, dropped);
  // Rare (a record given up while its lane drains or stops): the queue is copied.
  if (lane.ready.length > 0) for (const w of lane.ready.removeIf((x) => x.keyHash === work.keyHash && lane.keys.sameKey(x, work))) dropped.push(w);
  return dropped;
}

/**
 * Calls `then` after `delayMs` (within half of a draining lane's time left) while `work`
 * keeps its slot and its key. Returns `false`, setting nothing, when its lane has no time
 * left: the caller abandons the record.
 */
export function waitWithin<M>(work: Work<M, Lane<M>>, delayMs: number, then: () => void): boolean {
  const lane = work.lane;
  const left = lane.state === "active" ? Infinity : drainLeft(lane);
  if (left <= 0) return false;
  lane.waiting.add(work);
  work.then = then;
  work.due = Date.now() + Math.min(delayMs, retryRoom(left));
  work.timer = setTimeout(() => fire(work), Math.min(delayMs, retryRoom(left)));
  return true;
}

function fire<M>(work: Work<M, Lane<M>>): void {
  work.timer = undefined;
  work.lane.waiting.delete(work);
  const then = work.then;
  work.then = undefined;
  then?.();
}

/** Makes a waiting record's timer fire within `left` ms (keeping it when it fires sooner). */
function capWait<M>(work: Work<M, Lane<M>>, left: number): void {
  const due = Date.now() + retryRoom(left);
  if (work.due <= due) return;
  clearTimeout(work.timer);
  work.due = due;
  work.timer = setTimeout(() => fire(work), retryRoom(left));
}

/**
 * Stops dispatching a lane. `draining` (revoke or shutdown) until `until` (`Date.now()`
 * ms): queued records above the highest offset started so far are dropped; those below it
 * still run (under `key` ordering a record may wait behind its key while later offsets
 * ran), and records waiting to retry keep their slot and retry before the deadline.
 * `stopped` (a record failed for good): everything queued is dropped, retries too.
 * `keepBelowStarted` false (a revoke the client does not wait for, a drain while commits do
 * not land): a draining lane drops every queued record too, retries included. Records
 * running now finish. Returns the dropped ones.
 */
export function stopLane<M>(
  lane: Lane<M>,
  state: "draining" | "stopped",
  until: number,
  keepBelowStarted: boolean,
  ordering: Ordering,
): Work<M, Lane<M>>[] {
  if (lane.state === "active" || state === "stopped") lane.state = state;
  // A drain that keeps nothing has no time left either: its retries go, and a running record that fails is abandoned.
  if (state === "draining") lane.drainUntil = keepBelowStarted ? Math.max(lane.drainUntil, until) : 0;
  const dropped: Work<M, Lane<M>>[] = [];
  const left = lane.userPaused ? 0 : drainLeft(lane); // a user-paused lane starts nothing, retries neither
  if (left <= 0) {
    // Records waiting to run again: abandoned (their keys' later records with them).
    const retrying = [...lane.retry.clear(), ...lane.waiting];
    lane.waiting.clear();
    for (const w of retrying) {
      clearTimeout(w.timer);
      w.timer = undefined;
      dropped.push(w, ...abandonWork(w, ordering));
    }
  } else {
    // A retry timer set to fire past the deadline fires sooner, leaving time for the attempt.
    for (const w of lane.waiting) capWait(w, left);
  }
  const keep = lane.state === "draining" && !lane.userPaused && keepBelowStarted ? lane.maxStarted : -1;
  // `ready` is in offset order: what is below the mark stays.
  for (const w of lane.ready.clear()) {
    if (w.offset < keep) lane.ready.push(w);
    else dropped.push(w);
  }
  // A record that took its key and waits for a slot: above the mark, it goes, its chain (all
  // later) with it, and the key is free (the records of that key in `ready` are later still: gone).
  for (const w of lane.unblocked.clear()) {
    if (w.offset < keep) lane.unblocked.push(w);
    else {
      dropped.push(w);
      cutChain(lane, w, -1, dropped);
      lane.keys.delete(w);
    }
  }
  // The held keys' chains (their holders run, wait to retry or were kept): what is parked above the mark goes.
  for (const holder of lane.keys.holders()) cutChain(lane, holder, keep, dropped);
  lane.notifyIdle();
  return dropped;
}
