/**
 * What the dispatcher calls back: how an attempt starts, how a partition is paused and
 * resumed, the rate limit's gate and where records' keys are read.
 *
 * @module
 */
import type { KeyReader } from "./distinct_keys.ts";
import type { Lane } from "./lane.ts";
import type { Work } from "./work.ts";

/** What the dispatcher calls back. */
export interface DispatchHooks<M> {
  /** Starts an attempt of `work` (the dispatcher already counted it as running). */
  start(work: Work<M, Lane<M>>): void;
  /** Pause fetching the lane's partition. */
  pause(lane: Lane<M>, reason: "high-water-mark" | "max-buffered"): void;
  /** Resume fetching the lane's partition. */
  resume(lane: Lane<M>): void;
  /** A new lane's record signal, before any record of it starts (`ConsumerClient.recordSignal`). */
  recordSignal?(signal: AbortSignal): void;
  /** A lane was added (the user's pauses apply to it). */
  added?(lane: Lane<M>): void;
  /** The rate limit (`rateLimit`): every attempt needs its `ready()`, then takes a token with `took()`. */
  readonly gate?: { ready(): boolean; took(): void; stop(): void };
  /**
   * `key` ordering: where records' keys are read (the client): `Dispatcher.keyHash` from its
   * `keyHashOf` when it has one, else from `keyOf`; the keys themselves only when two
   * records' hashes are equal. Without it no record has a key.
   */
  readonly keys?: KeyReader<M>;
}
