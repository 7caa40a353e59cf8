/**
 * An independent reference model of the dispatcher's records, for dispatcher_property.test.ts:
 * every delivered record of every lane with its state, in a plain array, nothing clever. The
 * test drives a real Dispatcher and checks it against the model after every operation.
 */
import type { Ordering } from "../../core/consumer/dispatch/dispatch_options.ts";

/**
 * A record's state: `queued` (delivered, not started, not dropped), `running` (an attempt's
 * handler call), `waiting` (between attempts: its retry timer, then the retry queue),
 * `settled` (completed, or finished in its direct call), `dropped` (a stop or an abandon
 * took it out of the queues: it stays pending), `abandoned` (started, given up: pending).
 */
export type State = "queued" | "running" | "waiting" | "settled" | "dropped" | "abandoned";

/** One delivered record. */
export interface Rec {
  readonly lane: number;
  readonly offset: number;
  readonly key: string | undefined;
  state: State;
  /** First attempts started (never more than 1). */
  starts: number;
}

/** The model of the records of a dispatcher's lanes. */
export class DispatchModel {
  readonly recs: Rec[][];
  /** Per lane: highest offset whose first attempt started (-1: none). */
  readonly maxStarted: number[];
  /** Per lane: a first attempt must be below this (a drain's keep mark); Infinity while active. */
  readonly mark: number[];

  constructor(readonly ordering: Ordering, lanes: number) {
    this.recs = Array.from({ length: lanes }, () => []);
    this.maxStarted = Array.from({ length: lanes }, () => -1);
    this.mark = Array.from({ length: lanes }, () => Infinity);
  }

  add(lane: number, offset: number, key: string | undefined): Rec {
    const r: Rec = { lane, offset, key, state: "queued", starts: 0 };
    this.recs[lane].push(r);
    return r;
  }

  /** Why `r` may not start its first attempt now (undefined: it may). */
  whyNotFirst(r: Rec): string | undefined {
    if (r.state !== "queued") return `it is ${r.state}`;
    if (r.starts > 0) return "it started before";
    if (r.offset >= this.mark[r.lane]) return `its lane drains below ${this.mark[r.lane]}`;
    for (const e of this.recs[r.lane]) {
      if (e === r) break;
      // (a record abandoned while its lane drains with no time left drops nothing under `partition`)
      if (this.ordering === "partition" && e.state !== "settled" && e.state !== "abandoned") return `offset ${e.offset} is ${e.state}`;
      if (this.ordering === "key" && r.key !== undefined && e.key === r.key && e.state !== "settled") {
        return `offset ${e.offset} of key ${r.key} is ${e.state}`;
      }
    }
    if (this.ordering === "partition" && this.inFlight(r.lane).length > 0) return "its partition has a record in flight";
    return undefined;
  }

  /** `r` starts its first attempt. */
  started(r: Rec): void {
    r.state = "running";
    r.starts++;
    if (r.offset > this.maxStarted[r.lane]) this.maxStarted[r.lane] = r.offset;
  }

  /** Records of `lane` in flight: running or between attempts. */
  inFlight(lane: number): Rec[] {
    return this.recs[lane].filter((r) => r.state === "running" || r.state === "waiting");
  }

  inState(lane: number, ...states: State[]): Rec[] {
    return this.recs[lane].filter((r) => states.includes(r.state));
  }

  /** What abandoning in-flight `r` must drop: under `key` ordering the queued records of its key. */
  abandonDrops(r: Rec): Rec[] {
    if (this.ordering !== "key" || r.key === undefined) return [];
    return this.recs[r.lane].filter((e) => e.state === "queued" && e.key === r.key);
  }

  /**
   * What a stop of `lane` must drop: with no time left the records between attempts (and
   * their keys' queued records), then every queued record at or above `keep`.
   */
  stopDrops(lane: number, noTime: boolean, keep: number): Rec[] {
    const out = new Set<Rec>();
    if (noTime) {
      for (const w of this.inState(lane, "waiting")) {
        out.add(w);
        for (const e of this.abandonDrops(w)) out.add(e);
      }
    }
    for (const e of this.inState(lane, "queued")) if (e.offset >= keep) out.add(e);
    return [...out];
  }

  /** Records of `lane` not settled: what its tracker holds pending. */
  pending(lane: number): number {
    return this.recs[lane].filter((r) => r.state !== "settled").length;
  }

  /** A per-key (or, under `partition`, per-lane) violation of "at most one in flight", if any. */
  overlap(lane: number): string | undefined {
    const flying = this.inFlight(lane);
    if (this.ordering === "partition" && flying.length > 1) return `${flying.length} in flight in lane ${lane}`;
    if (this.ordering !== "key") return undefined;
    const seen = new Set<string>();
    for (const r of flying) {
      if (r.key === undefined) continue;
      if (seen.has(r.key)) return `key ${r.key} twice in flight in lane ${lane}`;
      seen.add(r.key);
    }
    return undefined;
  }
}
