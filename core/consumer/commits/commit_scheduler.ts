/**
 * Coalesced commits: at most one commit in flight, carrying the newest safe positions
 * at the moment it goes out. `confirmed` moves only when the broker acknowledged
 * ({@link Frontier.confirm}); a failed, timed-out or uncertain commit moves nothing
 * ({@link Frontier.fail}) and its partitions are proposed again later.
 *
 * @module
 */
import type { CommitOffset } from "../port/mod.ts";
import { InvalidArgumentError, OffsetFrontierError, describe } from "../../errors.ts";
import type { CommitProposal, Frontier, PartitionCommit } from "../../tracker/frontier.ts";

/** `interval`: commit every `intervalMs`. `eager`: commit as soon as the previous commit returned and something moved. */
export type CommitMode = "interval" | "eager";

/** Commit options of a consumer. */
export interface CommitOptions {
  /**
   * Default `"eager"`: a crash then redoes only what finished during the last commit's
   * round trip (plus what was running), while one commit in flight at a time bounds the
   * broker load to one commit per round trip per consumer. `"interval"` commits less
   * often (and redoes up to an interval's work after a crash).
   */
  mode?: CommitMode;
  /** Interval mode: period. Eager mode: the retry period after a failure. Default 1,000 ms. */
  intervalMs?: number;
  /** A commit that has not answered after this long is treated as failed (uncertain). Default 10,000 ms. */
  timeoutMs?: number;
  /**
   * When no commit has been acknowledged for this long while records kept finishing, no
   * new record starts until one is (running records finish): while commits cannot land —
   * a broker outage, a lost coordinator — what a crash would redo stays bounded. A commit
   * the client refuses outright, or the client's report that the cluster is out of reach,
   * holds at once (a timed-out commit after this long). Default
   * 1,000 ms in eager mode (hundreds of healthy round trips), 3 × `intervalMs` in interval
   * mode; `Infinity` never holds.
   */
  stallMs?: number;
  /**
   * Eager mode: once no commit was acknowledged for four usual round trips (the fastest of
   * the last 16; at least 100 ms), no new record starts while more than this many records
   * finished since the last acknowledgement (running records finish). `commit.stallMs` bounds the time work
   * may run ahead of the last acknowledged commit; this bounds the count, which at
   * thousands of records a second is what an exit or a SIGKILL during an outage redoes
   * before an outage is noticed (a broker killed under a commit in flight, the client still
   * retrying). Commits as fast as usual are never that late; ones slowing down are, and
   * then cap the pace at this many records per round trip. Default 10 × `concurrency` in eager
   * mode, `Infinity` (no count bound) in interval mode; an integer ≥ 1 or `Infinity`.
   */
  maxUncommitted?: number;
  /**
   * Completed sets in the commit metadata (default on, budget 4,095 characters per
   * partition: the broker's `offset.metadata.max.bytes`, 4,096, less the NUL byte the bindings
   * store after the metadata so that Confluent's client reads it back; an integer in [16, 65,536], else the
   * runner's constructor throws): each commit says which records
   * above its offset are finished, so the next owner of the partition skips them.
   * `false` turns them off.
   */
  completedSet?: { budget?: number } | false;
  /**
   * Your own per-partition commit metadata instead of the completed set (requires
   * `completedSet: false`). Keep it under the broker's 4 KiB default.
   */
  metadata?: (topic: string, partition: number, offset: number) => string | undefined;
}

/** What the scheduler needs from its owner. */
export interface CommitSchedulerHooks {
  /** Sends a commit; resolves only when the broker acknowledged. */
  send(offsets: readonly CommitOffset[]): Promise<void>;
  /** Which partitions may be committed now (default: every partition in the frontier). */
  include?(topic: string, partition: number): boolean;
  /** An acknowledged commit. */
  committed?(offsets: readonly CommitOffset[], latencyMs: number): void;
  /** A failed or uncertain commit. */
  failed?(offsets: readonly CommitOffset[], error: unknown): void;
  /** Milliseconds clock (default `performance.now`). */
  now?(): number;
}

/** A commit that did not answer within `timeoutMs`: its outcome is unknown, so nothing moved. */
export class CommitTimeoutError extends OffsetFrontierError {}

/**
 * Sends the commits a {@link Frontier} proposes, one at a time.
 *
 * @example
 * ```ts
 * import { CommitScheduler } from "./commit_scheduler.ts";
 * import { Frontier } from "offset-frontier";
 * const frontier = new Frontier({ engine: "js" });
 * const scheduler = new CommitScheduler(frontier, { send: async (offsets) => { console.log(offsets); } }, { mode: "eager" });
 * scheduler.start();
 * // ... records complete; call scheduler.notify() when a safe position advanced ...
 * await scheduler.stop(); // the final flush
 * ```
 */
export class CommitScheduler {
  readonly #frontier: Frontier;
  readonly #hooks: CommitSchedulerHooks;
  readonly #mode: CommitMode;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #metadata: CommitOptions["metadata"];
  readonly #now: () => number;
  #inflight: Promise<boolean> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #soon: ReturnType<typeof setTimeout> | undefined;
  #extra: PartitionCommit[] = [];
  #running = false;
  #lastFailed = false;

  /**
   * A scheduler that is not started yet.
   * @param frontier the frontier whose proposals are sent
   * @param hooks how to send, and what to report
   * @param options mode, interval, timeout, metadata
   * @throws {InvalidArgumentError} for a bad mode, interval or timeout
   */
  constructor(frontier: Frontier, hooks: CommitSchedulerHooks, options: CommitOptions = {}) {
    const { mode = "eager", intervalMs = 1_000, timeoutMs = 10_000, metadata } = options;
    if (mode !== "interval" && mode !== "eager") {
      throw new InvalidArgumentError(`commit.mode must be "interval" or "eager"; got ${describe(mode)}`);
    }
    if (typeof intervalMs !== "number" || !Number.isFinite(intervalMs) || intervalMs < 1) {
      throw new InvalidArgumentError(`commit.intervalMs must be a finite number ≥ 1; got ${describe(intervalMs)}`);
    }
    if (typeof timeoutMs !== "number" || !(timeoutMs > 0)) {
      throw new InvalidArgumentError(`commit.timeoutMs must be a number > 0; got ${describe(timeoutMs)}`);
    }
    if (metadata !== undefined && typeof metadata !== "function") {
      throw new InvalidArgumentError(`commit.metadata must be a function; got ${describe(metadata)}`);
    }
    this.#frontier = frontier;
    this.#hooks = hooks;
    this.#mode = mode;
    this.#intervalMs = intervalMs;
    this.#timeoutMs = timeoutMs;
    this.#metadata = metadata;
    this.#now = hooks.now ?? (() => performance.now());
  }

  /** Whether a commit is in flight. */
  get busy(): boolean {
    return this.#inflight !== undefined;
  }

  /** Starts the periodic commits. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#arm();
  }

  /** A safe position advanced. Eager mode: commit now unless one is in flight (then right after it). */
  notify(): void {
    if (!this.#running || this.#mode !== "eager" || this.#soon !== undefined || this.#lastFailed) return;
    if (this.#inflight) return; // the in-flight commit re-checks when it returns
    this.#soon = setTimeout(this.#onSoon, 0);
  }

  // Made once: a closure written in notify() would make every call of it (one per completion
  // that advances) allocate a context for `this`, whether the timer is set or not.
  readonly #onSoon = (): void => {
    this.#soon = undefined;
    void this.#commitOnce();
  };

  /**
   * Adds final commits of ended assignments (from {@link Frontier.revoke}) to the next
   * commit; best-effort (not retried on failure). Eager mode sends it at once.
   */
  addFinal(commits: readonly PartitionCommit[]): void {
    if (commits.length === 0) return;
    this.#extra.push(...commits);
    if (this.#mode === "eager" && this.#running && !this.#inflight) void this.#commitOnce();
  }

  /**
   * Waits for the commit in flight, then commits the newest safe positions (and any
   * final commits) once.
   * @returns whether everything that was to be committed was acknowledged
   */
  async flush(): Promise<boolean> {
    while (this.#inflight) await this.#inflight;
    return await this.#commitOnce();
  }

  /**
   * Commits the newest safe positions at once, even while a commit is in flight: an
   * orderly revoke's first commit must leave before the client rejoins the group (a
   * client that rejoins at once ends the generation the commit belongs to).
   * @returns whether it was acknowledged (`true` when there was nothing to commit)
   */
  urgent(): Promise<boolean> {
    const before = this.#inflight;
    if (!before) return this.#commitOnce();
    const proposal = this.#frontier.propose(this.#hooks.include);
    const extra = this.#extra;
    this.#extra = [];
    if (!proposal && extra.length === 0) return Promise.resolve(true);
    const run = this.#send(proposal, extra);
    const both = Promise.all([before, run]).then(([a, b]) => a && b);
    this.#inflight = both; // the next coalesced commit waits for both
    void both.finally(() => {
      if (this.#inflight === both) this.#inflight = undefined;
    });
    return run;
  }

  /** Stops the periodic commits, then flushes once. */
  async stop(): Promise<boolean> {
    this.#halt();
    return await this.flush();
  }

  /** Stops the periodic commits without a flush. */
  halt(): void {
    this.#halt();
  }

  #halt(): void {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#soon !== undefined) clearTimeout(this.#soon);
    this.#timer = this.#soon = undefined;
  }

  #arm(): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#inflight) void this.#commitOnce().finally(() => this.#arm());
      else this.#arm();
    }, this.#intervalMs);
    // The client's connections keep a consumer alive, not this timer (Node and Bun timers
    // have unref(); Deno's are plain numbers).
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Sends one commit unless one is in flight; resolves `true` when nothing failed. */
  #commitOnce(): Promise<boolean> {
    if (this.#inflight) return this.#inflight;
    const proposal = this.#frontier.propose(this.#hooks.include);
    const extra = this.#extra;
    this.#extra = [];
    if (!proposal && extra.length === 0) return Promise.resolve(true);
    const run = this.#send(proposal, extra);
    this.#inflight = run;
    void run.finally(() => {
      if (this.#inflight === run) this.#inflight = undefined;
      // Eager: whatever moved while this commit was out goes next.
      if (this.#running && this.#mode === "eager" && !this.#lastFailed) this.notify();
    });
    return run;
  }

  async #send(proposal: CommitProposal | undefined, extra: readonly PartitionCommit[]): Promise<boolean> {
    const meta = this.#metadata;
    const list: PartitionCommit[] = proposal ? [...proposal.offsets] : [];
    for (const e of extra) if (!list.some((c) => c.topic === e.topic && c.partition === e.partition)) list.push(e);
    const offsets: CommitOffset[] = list.map((c) => {
      const m = meta ? meta(c.topic, c.partition, c.offset) : c.metadata;
      return m === undefined ? { topic: c.topic, partition: c.partition, offset: c.offset } : { ...c, metadata: m };
    });
    const started = this.#now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        this.#hooks.send(offsets),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new CommitTimeoutError(`the commit did not answer within ${this.#timeoutMs} ms`)),
            this.#timeoutMs,
          );
        }),
      ]);
    } catch (error) {
      if (proposal) this.#frontier.fail(proposal);
      this.#lastFailed = true;
      this.#hooks.failed?.(offsets, error);
      return false;
    } finally {
      clearTimeout(timer);
    }
    if (proposal) this.#frontier.confirm(proposal);
    this.#lastFailed = false;
    this.#hooks.committed?.(offsets, this.#now() - started);
    return true;
  }
}
