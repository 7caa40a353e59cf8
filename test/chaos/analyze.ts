/**
 * Counting a chaos round from the members' logs (test/chaos/member.ts), what was
 * produced, and what happened to each member process. Pure: no I/O.
 *
 * Definitions (one round):
 * - a record is *finished* by a log line `F` naming its topic-partition and offset (the
 *   member wrote and fsynced it before its handler returned);
 * - `lost`: produced records, the poison excepted, with no `F` line in any log;
 * - `duplicates`: finishes beyond the first, summed over records (a record finished
 *   three times counts 2);
 * - `orderViolations`: `F` lines whose offset is not above every offset of the same key
 *   that the same process finished earlier *in the same assignment* (log order). Within a
 *   partition a key's offsets run in its seq order (the seq is checked against the topic:
 *   `mismatches`); offsets rather than seqs, so that a record the producer wrote twice is
 *   two records, not an order violation. Key order is a per-assignment promise: after a
 *   handover (a new assignment, in this process or another) an older record may be
 *   redone, and that redo is a duplicate, not a violation;
 * - `mismatches`: `F` lines naming a record that was not produced, or with another key or
 *   seq than the one produced there (a corrupt log or a mis-delivery);
 * - the duplicate breakdown: the i-th finish of a record (i ≥ 2, in time order) is charged
 *   to what ended the assignment of the (i−1)-th finish: `sigkill` / `sigterm` (the
 *   assignment was its process's last, and the harness SIGKILLed / SIGTERMed it mid-round),
 *   `sigterm-outage` (a SIGTERM that the member received — its `T` line — while the broker
 *   was down: its final commit could not land, whatever it had finished since its last
 *   acknowledged commit is redone),
 *   `exited` (its process exited without a signal), `final-stop` (the end-of-round
 *   SIGTERM), `rebalance` (a later assignment in the same, living process followed an
 *   orderly revoke: `R`), `broker-restart` (that revoke or crash came while the broker was
 *   down or within {@link OUTAGE_SLACK_MS} after it was back), `client-crash` (a KafkaJS
 *   crash with restart, `X`, at another time), `same-assignment` (both finishes in one
 *   assignment: the runner ran a record twice), `unknown` (the logs do not tell);
 * - `redoneAfterCommit`: duplicates whose earlier finish was covered by an acknowledged
 *   commit (`K` line) of that finisher's own assignment — redone although committed past
 *   (a lowered group offset or a fetch from a stale position); the rest were redone
 *   because no acknowledged commit had covered them when their assignment ended.
 *
 * @module
 */

/** A produced record: where it landed and what it carries. */
export interface ProducedRecord {
  partition: number;
  offset: number;
  key: string;
  /** Per-key sequence number (0, 1, …); -1 for the poison. */
  seq: number;
  poison: boolean;
}

/** How a member process ended, as the harness saw it. */
export type MemberFate = "sigkill" | "sigterm" | "final-stop" | "exited";

/** A member process of the round. */
export interface MemberInfo {
  /** Member id (`m1`, …). */
  member: string;
  pid: number;
  fate: MemberFate;
}

/** A broker outage: killed at `downAt`, answering again at `upAt` (ms since the epoch). */
export interface Outage {
  downAt: number;
  upAt: number;
}

/** Causes of duplicates, see the module doc. */
export const DUPLICATE_CAUSES = [
  "sigkill",
  "sigterm",
  "sigterm-outage",
  "exited",
  "final-stop",
  "rebalance",
  "broker-restart",
  "client-crash",
  "same-assignment",
  "unknown",
] as const;

/** One cause of {@link DUPLICATE_CAUSES}. */
export type DuplicateCause = typeof DUPLICATE_CAUSES[number];

/** A revoke or crash this long after the broker answered again is still charged to the restart. */
export const OUTAGE_SLACK_MS = 15_000;

/** The counts of one round from the logs. */
export interface LogCounts {
  /** Non-poison records produced. */
  expected: number;
  /** Distinct records finished. */
  finished: number;
  /** `F` lines (every finish, duplicates included). */
  finishes: number;
  lost: number;
  duplicates: number;
  orderViolations: number;
  mismatches: number;
  /** Duplicates by cause (every cause present, zeros included). */
  duplicatesBy: Record<DuplicateCause, number>;
  /** Whether the poison was ever logged as finished (its handler always throws: it must not be). */
  poisonFinished: boolean;
  /** `consume()` calls that rejected at start (`S` lines): the member exited 1. */
  startFailures: number;
  /** Consumers that failed for good while running (`C` lines): the member exited 1. */
  consumerFailures: number;
  /** Duplicates whose earlier finish an acknowledged commit of its own assignment had covered. */
  redoneAfterCommit: number;
}

interface Finish {
  at: number;
  /** Index of the line in its log (log order). */
  line: number;
  member: string;
  pid: number;
  assignment: string;
}

/** What a process's log says about one of its assignments. */
interface AssignmentInfo {
  member: string;
  pid: number;
  /** Join number within the process. */
  n: number;
  /** Time of the first orderly revoke (`R`) in it. */
  revokedAt?: number;
  /** Time of the first crash (`X`) in it. */
  crashedAt?: number;
  /** Time of the SIGTERM (`T`), if it came in it. */
  terminatedAt?: number;
  /** Highest acknowledged commit per partition (`K`). */
  committed: Map<number, number>;
}

const tpKey = (partition: number, offset: number): string => `${partition}:${offset}`;

/**
 * Counts a round. `logs`: the text of every member's log; `topic`: the round's topic;
 * `members`: every process's fate, by pid; `outages`: the broker's outages.
 */
export function countLogs(
  topic: string,
  produced: readonly ProducedRecord[],
  logs: readonly string[],
  members: readonly MemberInfo[],
  outages: readonly Outage[],
): LogCounts {
  const byPos = new Map<string, ProducedRecord>();
  for (const r of produced) byPos.set(tpKey(r.partition, r.offset), r);
  const fates = new Map<number, MemberInfo>(members.map((m) => [m.pid, m]));
  const finishes = new Map<string, Finish[]>();
  const assignments = new Map<string, AssignmentInfo>(); // key `${pid}/${assignment}`
  const lastJoin = new Map<number, number>(); // pid -> highest join number seen
  let total = 0, orderViolations = 0, mismatches = 0, poisonFinished = false, startFailures = 0, consumerFailures = 0;
  const prefix = `${topic}-`;

  for (const text of logs) {
    // key order within (assignment, key) of this process: highest offset finished so far
    const maxOffset = new Map<string, number>();
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const f = lines[i].split("\t");
      if (f.length < 5) continue; // empty or torn last line
      const [kind, atText, member, pidText, assignment] = f;
      const at = Number(atText), pid = Number(pidText);
      const n = Number(assignment.slice(assignment.lastIndexOf(".") + 1));
      const aKey = `${pid}/${assignment}`;
      let info = assignments.get(aKey);
      if (!info && kind !== "F") {
        info = { member, pid, n, committed: new Map() };
        assignments.set(aKey, info);
      }
      if (Number.isFinite(n)) lastJoin.set(pid, Math.max(lastJoin.get(pid) ?? 0, n));
      if (kind === "R" && info && info.revokedAt === undefined) info.revokedAt = at;
      if (kind === "X" && info && info.crashedAt === undefined) info.crashedAt = at;
      if (kind === "T" && info && info.terminatedAt === undefined) info.terminatedAt = at;
      if (kind === "S") startFailures++;
      if (kind === "K" && info && f[5]) {
        for (const po of f[5].split(",")) {
          const [p, o] = po.split(":").map(Number);
          if (!(o <= (info.committed.get(p) ?? -1))) info.committed.set(p, o);
        }
      }
      if (kind === "C") consumerFailures++;
      if (kind !== "F") continue;
      // F ts member pid topic-partition offset key seq assignment
      if (f.length < 9) continue;
      const [, , , , tp, offsetText, key, seqText, fAssignment] = f;
      if (!tp.startsWith(prefix)) {
        mismatches++;
        continue;
      }
      const partition = Number(tp.slice(prefix.length));
      const offset = Number(offsetText);
      const seq = Number(seqText);
      const rec = byPos.get(tpKey(partition, offset));
      if (!rec || rec.key !== key || (!rec.poison && rec.seq !== seq)) {
        mismatches++;
        continue;
      }
      if (rec.poison) poisonFinished = true;
      total++;
      const aNum = Number(fAssignment.slice(fAssignment.lastIndexOf(".") + 1));
      if (Number.isFinite(aNum)) lastJoin.set(pid, Math.max(lastJoin.get(pid) ?? 0, aNum));
      const list = finishes.get(tpKey(partition, offset));
      const fin: Finish = { at, line: i, member, pid, assignment: fAssignment };
      if (list) list.push(fin);
      else finishes.set(tpKey(partition, offset), [fin]);
      const orderKey = `${fAssignment}\u0000${partition}\u0000${key}`;
      const prev = maxOffset.get(orderKey);
      if (prev !== undefined && offset <= prev) orderViolations++;
      else maxOffset.set(orderKey, offset);
    }
  }

  const inOutage = (t: number | undefined): boolean =>
    t !== undefined && outages.some((o) => t >= o.downAt && t <= o.upAt + OUTAGE_SLACK_MS);
  // Strictly while the broker was down (no slack): a final commit then cannot land.
  const brokerDown = (t: number | undefined): boolean => t !== undefined && outages.some((o) => t >= o.downAt && t <= o.upAt);
  const causeOf = (prev: Finish, next: Finish): DuplicateCause => {
    if (prev.pid === next.pid && prev.assignment === next.assignment) return "same-assignment";
    const info = assignments.get(`${prev.pid}/${prev.assignment}`);
    const n = Number(prev.assignment.slice(prev.assignment.lastIndexOf(".") + 1));
    const last = lastJoin.get(prev.pid) ?? n;
    if (n < last) {
      // A later assignment followed in the same, living process.
      if (info?.crashedAt !== undefined) return inOutage(info.crashedAt) ? "broker-restart" : "client-crash";
      if (info?.revokedAt !== undefined) return inOutage(info.revokedAt) ? "broker-restart" : "rebalance";
      return "unknown";
    }
    const fate = fates.get(prev.pid)?.fate;
    if (fate === "sigterm") {
      // The SIGTERM's time: the `T` line of any of the process's assignments (it logs one).
      let termAt = info?.terminatedAt;
      if (termAt === undefined) {
        for (const a of assignments.values()) if (a.pid === prev.pid && a.terminatedAt !== undefined) termAt = a.terminatedAt;
      }
      if (brokerDown(termAt)) return "sigterm-outage";
    }
    return fate ?? "unknown";
  };

  const duplicatesBy = Object.fromEntries(DUPLICATE_CAUSES.map((c) => [c, 0])) as Record<DuplicateCause, number>;
  let duplicates = 0, lost = 0, expected = 0, finished = 0, redoneAfterCommit = 0;
  for (const rec of produced) {
    const list = finishes.get(tpKey(rec.partition, rec.offset));
    if (!rec.poison) {
      expected++;
      if (!list) lost++;
    }
    if (!list) continue;
    finished++;
    list.sort((a, b) => a.at - b.at || a.line - b.line);
    for (let i = 1; i < list.length; i++) {
      duplicates++;
      duplicatesBy[causeOf(list[i - 1], list[i])]++;
      const prevInfo = assignments.get(`${list[i - 1].pid}/${list[i - 1].assignment}`);
      if ((prevInfo?.committed.get(rec.partition) ?? -1) > rec.offset) redoneAfterCommit++;
    }
  }
  return {
    expected,
    finished,
    finishes: total,
    lost,
    duplicates,
    orderViolations,
    mismatches,
    duplicatesBy,
    poisonFinished,
    startFailures,
    consumerFailures,
    redoneAfterCommit,
  };
}
