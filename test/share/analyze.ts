/**
 * The counts of a share-group evaluation round (test/share/eval.ts), from the members'
 * logs (test/share/member.ts) and what the harness produced and did.
 *
 * A record is `partition:offset`. Every delivery the handler saw (`G`), every finish
 * (`F`, fsynced before the ACCEPT went out) and every acknowledgement outcome (`A`/`Z`)
 * is on a member's log, so the counts are exact.
 *
 * @module
 */
import { readFileSync } from "node:fs";

/** What the harness passes to a member (test/share/member.ts), as one JSON argument. */
export interface ShareMemberConfig {
  brokers: string;
  topic: string;
  groupId: string;
  log: string;
  member: string;
  parent: number;
  seed: number;
}

/** The poison record's value: REJECTed, never ACCEPTed. */
export const POISON = "poison";

/** How a member process ended. */
export type Fate = "sigkill" | "sigterm" | "final-stop" | "exited";

/** One member process of the round. */
export interface MemberFacts {
  id: string;
  log: string;
  fate: Fate;
  /** When the harness signalled it (SIGKILL/SIGTERM, the final SIGTERM included), ms epoch. */
  signalAt?: number;
  /** When the process exited, ms epoch. */
  exitAt?: number;
}

/** Why a record ran again: what became of the earlier holder's copy. */
export const CAUSES = [
  /** The earlier holder's ACCEPT was confirmed by the broker: must never happen. */
  "acked-redelivered",
  /** The earlier holder's ACCEPT failed (connection dropped, broker down): its ack did not land. */
  "ack-failed",
  /** The earlier holder's runEach failed for good (an X line) after it got it, before an ack outcome. */
  "client-failure",
  /** The earlier holder was SIGKILLed holding it. */
  "sigkill",
  /** The earlier holder was SIGTERMed holding it (no ack outcome logged). */
  "sigterm",
  /** The earlier holder was stopped at the end of the round holding it. */
  "final-stop",
  /** None of the above: the holder lived on and logged no ack outcome. */
  "unexplained",
] as const;
/** One of {@link CAUSES}. */
export type Cause = typeof CAUSES[number];

/** The counts of one round. */
export interface ShareCounts {
  records: number;
  /** Produced non-poison records no member finished. */
  lost: number;
  lostRecords: string[];
  /** Finishes beyond the first, summed over records. */
  duplicates: number;
  duplicatesBy: Record<Cause, number>;
  /** Deliveries beyond the first, summed over records. */
  redeliveries: number;
  redeliveriesBy: Record<Cause, number>;
  /** Examples of redeliveries charged to `acked-redelivered` or `unexplained`: `rec member→member`. */
  unsoundExamples: string[];
  /** Finishes of a record that was not produced. */
  mismatches: number;
  /** Deliveries after the first whose delivery count was below 2. */
  redeliveredCountBelow2: number;
  /** Deliveries whose count was not above the record's previous delivery's count. */
  countNotIncreasing: number;
  /** First deliveries (the handler's first sight of the record) with a count above 1. */
  firstDeliveryCountAbove1: number;
  /**
   * Records the warm-up fetch at a member's first assignment acquired and RELEASEd without a
   * handler seeing them (R lines; summed over members), and the most times one record was.
   */
  prefetchReleased: number;
  prefetchReleasedMaxPerRecord: number;
  /** First deliveries with a count above 1 that an earlier warm-up fetch of the record explains. */
  firstDeliveryAfterPrefetch: number;
  /** The highest count of a first delivery, and of any delivery. */
  firstDeliveryCountMax: number;
  deliveryCountMax: number;
  /** How often the poison reached a handler, was rejected (confirmed), and reached one after a confirmed REJECT. */
  poisonDeliveries: number;
  poisonRejected: number;
  poisonAfterReject: number;
  /** ACCEPTs that failed (Z lines). */
  acksFailed: number;
  /** SIGTERMed members (mid-round and final): how long stop() took, ms (one entry each; -1: never returned). */
  termStopMs: number[];
  /** Records a SIGTERMed member got but had no ack outcome for when it exited. */
  termHeld: number;
  /** For those that ran again: from the member's exit to the next delivery, ms (max and median). */
  termHeldRedeliveryMaxMs: number;
  termHeldRedeliveryMedianMs: number;
  /** The same for SIGKILLed members: from the kill to the next delivery of what they held. */
  killHeld: number;
  killHeldRedeliveryMaxMs: number;
  killHeldRedeliveryMedianMs: number;
  /** runEach failures (X lines), each followed by a new consumer in the same member. */
  clientFailures: number;
  /** Error lines (E and X) over all members, and the distinct texts (first 10). */
  errors: number;
  errorTexts: string[];
}

interface Delivery {
  t: number;
  member: string;
  dc: number;
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Counts a round from the members' logs; `produced` maps every produced record to its value. */
export function analyze(produced: Map<string, string>, members: MemberFacts[]): ShareCounts {
  const gets = new Map<string, Delivery[]>();
  const fins = new Map<string, Delivery[]>();
  // `member rec` → the ack outcomes in time order (a member can get a record twice).
  const outcomes = new Map<string, Array<{ t: number; ok: boolean }>>();
  const outcome = (key: string, t: number, ok: boolean): void => {
    const l = outcomes.get(key);
    if (l) l.push({ t, ok });
    else outcomes.set(key, [{ t, ok }]);
  };
  const termStopMs: number[] = [];
  const failures = new Map<string, number[]>(); // member → X times
  const prefetched = new Map<string, number[]>(); // record → times a warm-up fetch released it unseen
  const errorTexts = new Set<string>();
  let errors = 0, acksFailed = 0, mismatches = 0;
  let poisonDeliveries = 0, poisonRejected = 0;
  const poisonRejectedAt: number[] = [];
  const fate = new Map(members.map((m) => [m.id, m]));
  const push = (map: Map<string, Delivery[]>, rec: string, d: Delivery): void => {
    const l = map.get(rec);
    if (l) l.push(d);
    else map.set(rec, [d]);
  };
  for (const m of members) {
    let text = "";
    try {
      text = readFileSync(m.log, "utf8");
    } catch {
      // a member killed before it wrote anything
    }
    let sawD = false;
    for (const line of text.split("\n")) {
      if (!line) continue;
      const [ts, kind, rec, a3] = line.split("\t");
      const t = Number(ts);
      switch (kind) {
        case "G":
          push(gets, rec, { t, member: m.id, dc: Number(a3) });
          break;
        case "F":
          if (!produced.has(rec)) mismatches++;
          push(fins, rec, { t, member: m.id, dc: Number(a3) });
          break;
        case "P":
          poisonDeliveries++;
          break;
        case "PA":
          poisonRejected++;
          poisonRejectedAt.push(t);
          break;
        case "A":
          outcome(`${m.id} ${rec}`, t, true);
          break;
        case "Z":
          acksFailed++;
          outcome(`${m.id} ${rec}`, t, false);
          break;
        case "R": {
          const [p, range] = rec.split(":");
          const [first, last] = range.split("-").map(Number);
          for (let o = first; o <= last; o++) {
            const k = `${p}:${o}`;
            prefetched.set(k, [...(prefetched.get(k) ?? []), t]);
          }
          break;
        }
        case "X":
          failures.set(m.id, [...(failures.get(m.id) ?? []), t]);
          errors++;
          if (errorTexts.size < 10) errorTexts.add(rec);
          break;
        case "E":
          errors++;
          if (errorTexts.size < 10) errorTexts.add(rec);
          break;
        case "D":
          sawD = true;
          if (m.fate === "sigterm" || m.fate === "final-stop") termStopMs.push(Number(rec));
          break;
      }
    }
    if (!sawD && (m.fate === "sigterm" || m.fate === "final-stop")) termStopMs.push(-1);
  }

  /** The ack outcome of delivery `d` of `rec`: the member's first one at or after it. */
  const outcomeOf = (d: Delivery, rec: string): boolean | undefined =>
    outcomes.get(`${d.member} ${rec}`)?.find((o) => o.t >= d.t)?.ok;
  const cause = (prev: Delivery, rec: string): Cause => {
    const o = outcomeOf(prev, rec);
    if (o === true) return "acked-redelivered";
    if (o === false) return "ack-failed";
    if ((failures.get(prev.member) ?? []).some((x) => x >= prev.t)) return "client-failure";
    const f = fate.get(prev.member)?.fate;
    if (f === "sigkill" || f === "sigterm" || f === "final-stop") return f;
    return "unexplained";
  };
  const zero = (): Record<Cause, number> => Object.fromEntries(CAUSES.map((c) => [c, 0])) as Record<Cause, number>;
  const duplicatesBy = zero();
  const redeliveriesBy = zero();
  const unsoundExamples: string[] = [];
  let duplicates = 0, redeliveries = 0, below2 = 0, notIncreasing = 0, firstAbove1 = 0, firstMax = 0, dcMax = 0, firstAfterPrefetch = 0;
  const lostRecords: string[] = [];
  const poisonRec = [...produced].find(([, v]) => v === POISON)?.[0];
  for (const [rec] of produced) {
    if (rec !== poisonRec && !fins.has(rec)) lostRecords.push(rec);
  }
  for (const [rec, fs] of fins) {
    fs.sort((a, b) => a.t - b.t);
    for (let i = 1; i < fs.length; i++) {
      duplicates++;
      duplicatesBy[cause(fs[i - 1], rec)]++;
    }
  }
  let poisonAfterReject = 0;
  const heldRedelivery = (sig: "sigterm" | "sigkill"): { held: number; waits: number[] } => {
    let held = 0;
    const waits: number[] = [];
    for (const [rec, gs] of gets) {
      for (let i = 0; i < gs.length; i++) {
        const m = fate.get(gs[i].member)!;
        const matches = sig === "sigterm" ? m.fate === "sigterm" || m.fate === "final-stop" : m.fate === "sigkill";
        if (!matches) continue;
        if (outcomeOf(gs[i], rec) !== undefined) continue;
        if (rec === poisonRec && poisonRejected > 0) continue;
        held++;
        const next = gs.slice(i + 1).find((g) => g.member !== m.id);
        const from = sig === "sigterm" ? m.exitAt : m.signalAt;
        if (next && from !== undefined) waits.push(next.t - from);
      }
    }
    return { held, waits };
  };
  for (const [rec, gs] of gets) {
    gs.sort((a, b) => a.t - b.t);
    if (gs[0].dc > 1) firstAbove1++;
    if (gs[0].dc > 1 && (prefetched.get(rec) ?? []).some((t) => t <= gs[0].t)) firstAfterPrefetch++;
    firstMax = Math.max(firstMax, gs[0].dc);
    for (const g of gs) dcMax = Math.max(dcMax, g.dc);
    for (let i = 1; i < gs.length; i++) {
      redeliveries++;
      const c = cause(gs[i - 1], rec);
      redeliveriesBy[c]++;
      if ((c === "acked-redelivered" || c === "unexplained") && unsoundExamples.length < 10) {
        unsoundExamples.push(`${rec} ${gs[i - 1].member}@${gs[i - 1].t}→${gs[i].member}@${gs[i].t} dc ${gs[i - 1].dc}→${gs[i].dc}`);
      }
      if (gs[i].dc < 2) below2++;
      if (gs[i].dc <= gs[i - 1].dc) notIncreasing++;
    }
    if (rec === poisonRec && poisonRejectedAt.length > 0) {
      const first = Math.min(...poisonRejectedAt);
      poisonAfterReject += gs.filter((g) => g.t > first).length;
    }
  }
  const term = heldRedelivery("sigterm");
  const kill = heldRedelivery("sigkill");
  return {
    records: produced.size,
    lost: lostRecords.length,
    lostRecords: lostRecords.slice(0, 20),
    duplicates,
    duplicatesBy,
    redeliveries,
    redeliveriesBy,
    unsoundExamples,
    mismatches,
    redeliveredCountBelow2: below2,
    countNotIncreasing: notIncreasing,
    firstDeliveryCountAbove1: firstAbove1,
    prefetchReleased: [...prefetched.values()].reduce((n, ts) => n + ts.length, 0),
    prefetchReleasedMaxPerRecord: Math.max(0, ...[...prefetched.values()].map((ts) => ts.length)),
    firstDeliveryAfterPrefetch: firstAfterPrefetch,
    firstDeliveryCountMax: firstMax,
    deliveryCountMax: dcMax,
    poisonDeliveries,
    poisonRejected,
    poisonAfterReject,
    acksFailed,
    termStopMs,
    termHeld: term.held,
    termHeldRedeliveryMaxMs: term.waits.length ? Math.max(...term.waits) : 0,
    termHeldRedeliveryMedianMs: median(term.waits),
    killHeld: kill.held,
    killHeldRedeliveryMaxMs: kill.waits.length ? Math.max(...kill.waits) : 0,
    killHeldRedeliveryMedianMs: median(kill.waits),
    clientFailures: [...failures.values()].reduce((n, xs) => n + xs.length, 0),
    errors,
    errorTexts: [...errorTexts],
  };
}
