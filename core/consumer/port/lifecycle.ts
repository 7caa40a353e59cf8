/**
 * Where a consumer is in its life: the state the parts of a {@link ParallelConsumer} read
 * (only the consumer itself moves it).
 *
 * @module
 */

/** Where a consumer is in its life. */
export type ConsumerState = "created" | "starting" | "running" | "stopping" | "stopped" | "failed";

/** A consumer's state, shared read-only with its parts (delivery, claims, stall guard, rebalance). */
export class ConsumerLife {
  /** The current state; moved by the consumer only. */
  state: ConsumerState = "created";

  /** Whether records are taken and fetching may resume: `starting` or `running`. */
  get live(): boolean {
    return this.state === "running" || this.state === "starting";
  }
}
