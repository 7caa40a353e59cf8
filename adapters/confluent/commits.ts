/**
 * Verified commits for the Confluent binding. The client's `commitOffsets` resolves as
 * soon as librdkafka queued the commit (`commitAsync`), before the broker answered, so a
 * commit the broker refused (e.g. metadata above `offset.metadata.max.bytes`) would look
 * like a success. librdkafka reports each commit's outcome to its `offset_commit_cb`,
 * which the client re-emits as the internal client's `offset.commit` event `(err,
 * offsets)`; `err` is set when any partition of the commit failed (its error code, or
 * the request's). A commit here resolves only when that event reported it without error,
 * or when the group's committed offsets, read back from the broker, hold exactly what it
 * sent (offsets and metadata).
 *
 * Why the read-back: librdkafka serves `offset_commit_cb` only while the application
 * polls, and the client does not poll while its (awaited) rebalance callback runs. A
 * commit sent during a revoke (the drain's commit) was acknowledged by the broker within
 * milliseconds, yet its outcome event stayed queued until the callback returned, so the
 * revoke waited for the outcome timeout (the revoke bound, 10 s) while the whole group
 * (classic eager: every member) waited for this member's rejoin. The read-back
 * (`OffsetFetch`, served on its own queue, no poll needed) proves the broker holds the
 * commit; it is only asked for when the outcome is late.
 *
 * Overtaken commits: a commit settled before its outcome came (read back, or given up after
 * 400 ms or the timeout) may still be in librdkafka, which resends an `OffsetCommit` after a
 * broken connection (twice once sent, and without limit while it waits for the coordinator).
 * A resend that reaches the broker after a newer commit of the same partition moves the
 * committed offset back: seen in the chaos suite, a commit sent just before the broker was
 * killed landed after the commits made once it was back, and the next owner redid what those
 * covered. Never a loss (every commit sent holds a safe position), but redone work. So the
 * verifier remembers such commits; when librdkafka reports one's outcome after a newer
 * commit of one of its partitions was sent, it names those partitions to `overtaken`, and the
 * binding commits their newest positions again. Outcomes carry no metadata, so commits of the
 * same offsets are told apart by order (librdkafka answers in the order it sent, resends
 * aside); one taken for another's costs at most a repair or a read-back, never a commit
 * counted acknowledged for offsets the broker did not acknowledge.
 *
 * @module
 */

import { OffsetFrontierError } from "../../core/errors.ts";

/** The internal (node-rdkafka) client's event surface used here. */
export interface CommitEventSource {
  /** Adds a listener. */
  on(event: "offset.commit", listener: (err: unknown, offsets: unknown) => void): unknown;
  /** Removes a listener. */
  removeListener(event: "offset.commit", listener: (err: unknown, offsets: unknown) => void): unknown;
}

/** A commit the broker refused, or whose outcome librdkafka never reported. */
export class CommitRefusedError extends OffsetFrontierError {
  /** The librdkafka or broker error code (e.g. 12 `OFFSET_METADATA_TOO_LARGE`), when known. */
  readonly code: number | undefined;
  /**
   * A refused or unconfirmed commit.
   * @param message what happened, naming the partitions
   * @param code the error code, when known
   */
  constructor(message: string, code?: number) {
    super(message);
    this.code = code;
  }
}

/**
 * A commit librdkafka has not reported the outcome of yet. `settled`: the commit was decided
 * without it (read back, given up, timed out) and may still reach the broker.
 */
interface Awaiting {
  readonly signature: string;
  readonly seq: number;
  readonly partitions: ReadonlyArray<{ readonly topic: string; readonly partition: number }>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
}

/** How many settled commits awaiting their outcome are remembered (the oldest are forgotten first). */
const SETTLED_MAX = 1_000;

type Offset = { readonly topic: string; readonly partition: number; readonly offset: number | string };

/** A committed position as read back from the broker (offset as a decimal string or number; metadata as stored). */
export interface ReadBackPosition {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
  /** The committed offset (negative or absent: none). */
  readonly offset: number | string;
  /** The metadata stored with it (`null`/`undefined`/`""`: none). */
  readonly metadata?: string | null;
}

/** Reads the group's committed positions of `partitions` from the broker. */
export type ReadBack = (partitions: ReadonlyArray<{ topic: string; partition: number }>) => Promise<readonly ReadBackPosition[]>;

/** How long a commit's outcome may be late before its offsets are read back, and the pause between read-backs. */
const READ_BACK_AFTER_MS = 150;
const READ_BACK_EVERY_MS = 500;
/**
 * A commit whose outcome has not come and whose first read-back has not answered either
 * (neither an answer nor an error) this long after it was sent fails: the coordinator's
 * connection is held. Under the classic cooperative protocol librdkafka keeps fetching while
 * the member rejoins, and its JoinGroup, which the broker answers only once the rebalance
 * completes (after a dead member's session timeout), holds every later request on that
 * connection, commits included. Failing the commit makes the runner stop starting records at
 * once (`commit.stallMs` would wait a second), so a member killed during a long join redoes
 * less. The commit may still land later; it counts only as not acknowledged.
 */
const HELD_AFTER_MS = 400;

/**
 * Whether the positions read back hold exactly the commit of `offsets` (same offset and
 * the same metadata for every partition; no metadata counts as the empty string).
 */
export function holdsCommit(
  offsets: ReadonlyArray<Offset & { readonly metadata?: string | undefined }>,
  read: readonly ReadBackPosition[],
): boolean {
  const byKey = new Map(read.map((p) => [`${p.topic}\u0000${p.partition}`, p]));
  for (const o of offsets) {
    const p = byKey.get(`${o.topic}\u0000${o.partition}`);
    if (p === undefined || Number(p.offset) !== Number(o.offset)) return false;
    if ((p.metadata ?? "") !== (o.metadata ?? "")) return false;
  }
  return offsets.length > 0;
}

/** The commit's identity: its partitions and offsets, order-independent. */
function commitSignature(offsets: readonly Offset[]): string {
  return offsets.map((o) => `${o.topic}\u0000${o.partition}\u0000${Number(o.offset)}`).sort().join("\u0001");
}

function codeOf(err: unknown): number | undefined {
  if (typeof err === "number") return err;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * Matches commits with their `offset.commit` outcome. One instance per consumer; call
 * {@link CommitVerifier.close} when the consumer disconnects (pending commits then fail).
 */
export class CommitVerifier {
  readonly #source: CommitEventSource;
  readonly #timeoutMs: number;
  readonly #overtaken: (partitions: Array<{ topic: string; partition: number }>) => void;
  readonly #awaiting: Awaiting[] = []; // in the order sent (seq ascending)
  readonly #newest = new Map<string, number>(); // partition → seq of the newest commit sent for it
  #seq = 0;
  readonly #listener = (err: unknown, offsets: unknown): void => this.#onResult(err, offsets);

  /**
   * Listens to `source`'s commit outcomes.
   * @param source the internal client that emits `offset.commit`
   * @param timeoutMs how long to wait for an outcome before the commit counts as failed
   * @param overtaken called with the partitions whose committed offset a late commit may have
   *   moved back (its outcome came after a newer commit of them was sent)
   */
  constructor(
    source: CommitEventSource,
    timeoutMs = 60_000,
    overtaken: (partitions: Array<{ topic: string; partition: number }>) => void = () => {},
  ) {
    this.#source = source;
    this.#timeoutMs = timeoutMs;
    this.#overtaken = overtaken;
    source.on("offset.commit", this.#listener);
  }

  /**
   * Sends a commit through `send` and resolves once librdkafka reported it acknowledged,
   * or (when `readBack` is given and the outcome is late) once the broker's committed
   * positions hold exactly this commit; rejects when `send` fails, when the broker refused
   * any partition, when (with `readBack`) neither the outcome nor the first read-back came
   * within 400 ms (the coordinator's connection is held), or after the timeout.
   */
  async commit(
    offsets: ReadonlyArray<Offset & { readonly metadata?: string | undefined }>,
    send: () => Promise<void>,
    readBack?: ReadBack,
  ): Promise<void> {
    const seq = ++this.#seq;
    let pending!: Awaiting;
    const outcome = new Promise<void>((resolve, reject) => {
      const partitions = offsets.map((o) => ({ topic: o.topic, partition: o.partition }));
      pending = { signature: commitSignature(offsets), seq, partitions, resolve, reject, settled: false };
    });
    // Settled before `send` resolves (an early refusal, the timeout), `outcome` has no
    // handler yet: mark it handled, or the runtime treats it as unhandled and ends the process.
    outcome.catch(() => {});
    this.#awaiting.push(pending); // before sending: the outcome may come back before `send` resolves
    let settled = false;
    const timer = setTimeout(() => {
      pending.reject(new CommitRefusedError(`no outcome of the commit of ${describeOffsets(offsets)} within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
    let probe: ReturnType<typeof setTimeout> | undefined;
    let held: ReturnType<typeof setTimeout> | undefined;
    let sent = false;
    // Newest from the moment it is handed over: an older commit's outcome may come before `send` resolves.
    for (const o of offsets) this.#newest.set(partitionKey(o), seq);
    try {
      await send();
      sent = true;
      if (readBack !== undefined && offsets.length > 0) {
        const partitions = pending.partitions;
        let answered = false; // a read-back settled (an answer or an error)
        const check = (): void => {
          probe = undefined;
          if (settled) return;
          readBack(partitions).then(
            (read) => {
              answered = true;
              if (settled) return;
              if (holdsCommit(offsets, read)) pending.resolve();
              else probe = setTimeout(check, READ_BACK_EVERY_MS);
            },
            () => {
              answered = true;
              if (!settled) probe = setTimeout(check, READ_BACK_EVERY_MS); // unknown: the outcome or the timeout decides
            },
          );
        };
        probe = setTimeout(check, READ_BACK_AFTER_MS);
        held = setTimeout(() => {
          if (settled || answered) return;
          pending.reject(new CommitRefusedError(
            `neither the commit of ${describeOffsets(offsets)} nor a read of the group's committed offsets was answered ` +
              `within ${HELD_AFTER_MS} ms: the coordinator's connection is held (a group join in flight) or unreachable`,
          ));
        }, HELD_AFTER_MS);
      }
      await outcome;
    } finally {
      settled = true;
      clearTimeout(timer);
      clearTimeout(probe);
      clearTimeout(held);
      // Still awaiting here: settled without librdkafka's outcome, which may yet come (if sent).
      const i = this.#awaiting.indexOf(pending);
      if (i >= 0 && (!sent || offsets.length === 0)) this.#awaiting.splice(i, 1);
      else if (i >= 0) {
        pending.settled = true;
        if (this.#awaiting.filter((w) => w.settled).length > SETTLED_MAX) this.#awaiting.splice(this.#awaiting.findIndex((w) => w.settled), 1);
      }
    }
  }

  /**
   * Resolves once no commit settled without its outcome, and overtaken by a newer commit of
   * one of its partitions, waits for that outcome any more (it may still land after the
   * newer one and move the partition back; its outcome then asks for a repair), or after `ms`.
   * @param ms the bound
   */
  async outcomes(ms: number): Promise<void> {
    const open = (): boolean =>
      this.#awaiting.some((w) => w.settled && w.partitions.some((p) => (this.#newest.get(partitionKey(p)) ?? 0) > w.seq));
    for (const until = Date.now() + ms; open() && Date.now() < until;) {
      await new Promise<void>((resolve) => setTimeout(resolve, OUTCOME_POLL_MS));
    }
  }

  /** Stops listening; every pending commit fails (its outcome is unknown). */
  close(): void {
    this.#source.removeListener("offset.commit", this.#listener);
    for (const w of this.#awaiting) w.reject(new CommitRefusedError("the consumer disconnected before the commit's outcome was known"));
    this.#awaiting.length = 0;
  }

  /**
   * Outcomes carry offsets only (no metadata), and librdkafka answers commits in the order it
   * sent them, so an outcome belongs to the oldest commit of its offsets still awaiting one,
   * settled or not (a settled one would otherwise settle a newer commit of the same offsets
   * whose metadata never landed).
   */
  #onResult(err: unknown, offsets: unknown): void {
    if (!Array.isArray(offsets)) return;
    const signature = commitSignature(offsets as Offset[]);
    const i = this.#awaiting.findIndex((w) => w.signature === signature);
    if (i < 0) return;
    const [w] = this.#awaiting.splice(i, 1);
    if (w.settled) {
      // Whatever it did, it may have done after newer commits of its partitions.
      const moved = w.partitions.filter((p) => (this.#newest.get(partitionKey(p)) ?? 0) > w.seq);
      if (moved.length > 0) this.#overtaken(moved);
      return;
    }
    if (err === undefined || err === null || codeOf(err) === 0) return w.resolve();
    const code = codeOf(err);
    const text = (err as { message?: unknown } | null)?.message;
    w.reject(new CommitRefusedError(
      `the broker refused the commit of ${describeOffsets(offsets as Offset[])}: ` +
        `${typeof text === "string" ? text : "error"}${code !== undefined ? ` (code ${code})` : ""}`,
      code,
    ));
  }
}

/** How often {@link CommitVerifier.outcomes} looks again. */
const OUTCOME_POLL_MS = 20;

function partitionKey(p: { readonly topic: string; readonly partition: number }): string {
  return `${p.topic}\u0000${p.partition}`;
}

function describeOffsets(offsets: readonly Offset[]): string {
  return offsets.map((o) => `${o.topic}/${o.partition}@${o.offset}`).join(", ");
}
