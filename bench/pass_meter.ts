/**
 * How bench:consumer times one pass (bench/consumer_run.ts): the window from a pass's first
 * batch to its last record on the wall clock and in this process's CPU time, the check that
 * the pass read the whole topic, the wait that calls a pass stalled, and `plain-async`'s
 * promise per record.
 *
 * @module
 */
import process from "node:process";

/** One measured pass: wall-clock and CPU-time rates over the same window. */
export interface Rate {
  /** Records per wall-clock second. */
  wall: number;
  /** Records per CPU-second of this process. */
  cpu: number;
  /** Commits the runner sent (0 for plain). */
  commits: number;
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.now();
/** CPU seconds (user + system) this process used so far. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** A pass that did not reach the topic's end within {@link PASS_MS}: reported, left out of the medians. */
export class StalledPass extends Error {}
/** How long one pass may take (a pass of 300,000 records takes seconds). */
export const PASS_MS = 120_000;

/** Waits until `cond()` holds, checking every 2 ms; a {@link StalledPass} after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new StalledPass(`${what}: stalled for ${timeoutMs / 1000} s`);
    await sleep(2);
  }
}

/** A pass's window from its first batch (or tick) to its n-th record: the wall-clock and CPU rates. */
export interface Meter {
  begin(): void;
  tick(k: number): void;
  /** One record seen (partition and offset), counted as {@link tick}(1) and checked at the end. */
  seen(partition: number, offset: number): void;
  done(): boolean;
  count(): number;
  rate(commits: number): Rate;
}

/** A {@link Meter} for a pass of `n` records. */
export function meter(n: number): Meter {
  let count = 0, first = 0, last = 0, cpu0 = 0, cpu1 = 0;
  const top: number[] = []; // per partition: the highest offset seen
  const begin = (): void => {
    if (first === 0) (first = now()), (cpu0 = cpu());
  };
  const tick = (k: number): void => {
    begin();
    count += k;
    if (count >= n && last === 0) (last = now()), (cpu1 = cpu());
  };
  return {
    begin,
    tick,
    seen(partition, offset) {
      if (!(offset <= top[partition])) top[partition] = offset;
      tick(1);
    },
    done: () => count >= n,
    count: () => count,
    rate: (commits) => {
      // Both loops must have read the same records, to the end: n records, and (when
      // offsets were seen) every partition's last offset, which on a fresh topic sum to n.
      const ends = top.reduce((s, x) => s + (x === undefined ? 0 : x + 1), 0);
      if (count !== n || (top.length > 0 && ends !== n)) {
        throw new Error(`a pass counted ${count} records reaching offsets that sum to ${ends}; the topic holds ${n}`);
      }
      return { wall: n / ((last - first) / 1000), cpu: n / (cpu1 - cpu0), commits };
    },
  };
}

/**
 * `plain-async`: the least any runner must do with an async handler, without one: each
 * record's handler promise (resolved, as the runner's async variants return) and one then()
 * with a callback shared by every record, which counts it. Calls `done` once every record of
 * `messages` has been counted.
 */
export function asyncFloor<T>(messages: readonly T[], count: (message: T) => void, done: () => void): void {
  let left = messages.length;
  if (left === 0) return done();
  const settled = (message: T): void => {
    count(message);
    if (--left === 0) done();
  };
  for (const message of messages) void Promise.resolve(message).then(settled);
}
