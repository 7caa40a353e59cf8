/**
 * `key` ordering's waiting chains: a lane keeps only its keys in flight (`Lane.keys`, a
 * {@link HeldKeys} of the records holding them), and a queued record whose key is held when
 * the dispatcher reaches it is set aside behind the holder, on the holder's chain, linked
 * through the records themselves (`Work.behind`; the holder's `Work.last` is the chain's
 * end). Each chain is in offset order (records are set aside in the order `ready` holds
 * them), so when the holder settles the next record of the key takes the key: the key's
 * records start one at a time, in offset order, and the bookkeeping is proportional to the
 * keys in flight, not to the records retained. Nothing here allocates.
 *
 * @module
 */
import type { HeldKeys } from "./held_keys.ts";
import type { Lane } from "./lane.ts";
import type { Work } from "./work.ts";

/**
 * The next record of `lane.ready` that may start: it has no key, or its key is free (it
 * then takes it). Those met on the way whose key is held are set aside on the holder's
 * chain (each record at most once).
 */
export function takeReady<M>(lane: Lane<M>): Work<M, Lane<M>> | undefined {
  const ready = lane.ready;
  const keys: HeldKeys<Work<M, Lane<M>>> = lane.keys;
  for (;;) {
    const w = ready.shift();
    if (w === undefined) return undefined;
    if (w.keyHash < 0) return w;
    const holder = keys.take(w);
    if (holder === undefined) return w; // it took its key
    (holder.last ?? holder).behind = w;
    holder.last = w;
    lane.parked++;
  }
}

/**
 * `work` (which has a key) settled: it gives up its key, which passes to the first record of
 * its chain. Returns that record (which now holds the key, to be started or queued in
 * `unblocked`), or `undefined` (the key is free, or `work` held none). An ended lane's
 * chains are left as they are (nothing of it runs any more); a stopped lane has none.
 */
export function handOn<M>(lane: Lane<M>, work: Work<M, Lane<M>>): Work<M, Lane<M>> | undefined {
  const next = work.behind;
  if (next === undefined || lane.ended) {
    lane.keys.delete(work);
    return undefined;
  }
  if (!lane.keys.replace(work, next)) return undefined;
  next.last = work.last === next ? undefined : work.last;
  work.behind = work.last = undefined;
  lane.parked--;
  return next;
}

/**
 * Drops from the chain of `holder` every record at or above `keep` (-1: all), into
 * `dropped`; those below stay. The holder itself is its caller's to keep or drop.
 */
export function cutChain<M>(lane: Lane<M>, holder: Work<M, Lane<M>>, keep: number, dropped: Work<M, Lane<M>>[]): void {
  let prev = holder;
  let w = holder.behind;
  while (w !== undefined && w.offset < keep) {
    prev = w;
    w = w.behind;
  }
  if (w === undefined) return;
  prev.behind = undefined;
  holder.last = prev === holder ? undefined : prev;
  while (w !== undefined) {
    const after: Work<M, Lane<M>> | undefined = w.behind;
    w.behind = w.last = undefined;
    lane.parked--;
    dropped.push(w);
    w = after;
  }
}
