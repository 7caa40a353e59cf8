/**
 * Broker outages as the KafkaJS binding reports them to the runner
 * (`ClientSink.unavailable` / `available`, see core/consumer/port/cluster.ts), and the restart
 * of a crashed KafkaJS consumer.
 *
 * - The start's connect-and-subscribe attempts go on, with the runner's capped backoff,
 *   while the cluster does not answer; each failed attempt is reported. Refusals
 *   (authentication, authorization, an unknown topic when subscribing) and errors that are
 *   not KafkaJS's end the wait at once.
 * - Every `CRASH` that is not a refusal is restarted here after that backoff (`consumer.run`
 *   again): one KafkaJS does not restart (`restart: false`, e.g. "Failed to find group
 *   coordinator"), and one it would restart only after its own retry time (up to 30 s after
 *   a long outage; `stop()` cancels that).
 * - An outage ends with a sign of life: a `GROUP_JOIN` or an acknowledged commit.
 *
 * @module
 */
import type { Consumer, KafkaMessage } from "./types.ts";
import { brokersOf, isKafkaJSError, refusalOf } from "./errors.ts";
import { sleepUnlessAborted, unlessAborted } from "./waits.ts";
import type { ClientSink } from "../../core/consumer/port/mod.ts";
import { ClusterRefusedError } from "../../core/errors.ts";

/** What a {@link KafkaJSOutage} reads and drives. */
export interface KafkaJSOutageInputs {
  /** The KafkaJS consumer it stops and restarts after a crash. */
  readonly consumer: Consumer;
  /** The runner's sink (`undefined` before the start). */
  sink(): ClientSink<KafkaMessage> | undefined;
  /** The topic names subscribed to (not the patterns): an unknown one there is a refusal. */
  topicNames(): string[];
  /** Whether the binding closed. */
  closed(): boolean;
  /** Whether the runner stopped fetching (shutting down: nothing to restart). */
  stopped(): boolean;
}

/** One KafkaJS binding's outage reports, refusals and crash restarts. */
export class KafkaJSOutage {
  readonly #in: KafkaJSOutageInputs;
  #lastBroker: string | undefined; // the broker of the last request KafkaJS sent
  #unreachable = false; // the last attempt to reach the cluster failed (nothing answered since)
  #restartTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * The outage handling of one binding.
   * @param inputs what it reads and drives
   */
  constructor(inputs: KafkaJSOutageInputs) {
    this.#in = inputs;
  }

  /** Whether the last attempt to reach the cluster failed and nothing answered since. */
  get unreachable(): boolean {
    return this.#unreachable;
  }

  /** KafkaJS sent a request to `broker` (its `REQUEST` event): the broker an outage names when its error names none. */
  requested(broker: string): void {
    this.#lastBroker = broker;
  }

  /** Reports a failed attempt to reach the cluster; returns the backoff before the next one. */
  unavailable(error: unknown): number {
    this.#unreachable = true;
    return this.#in.sink()?.unavailable(error, this.#brokers(error)) ?? 1_000;
  }

  /** The cluster answered (the group coordinator, a dead letter's produce): an outage, if any, is over. */
  available(): void {
    this.#unreachable = false;
    this.#in.sink()?.available();
  }

  /** A commit was acknowledged: the cluster is reachable (the runner learns it from the commit itself). */
  answered(): void {
    this.#unreachable = false;
  }

  /**
   * Whether `error` ends the wait for the cluster, and with what reason: a refusal (a
   * `ClusterRefusedError`) or the error itself when it is not KafkaJS's; `undefined` for
   * an outage, which waiting can help.
   * @param subscribing the attempt reached subscribe: an unknown topic there means "no such topic"
   */
  refusal(error: unknown, subscribing: boolean): { readonly reason: unknown } | undefined {
    if (error instanceof ClusterRefusedError) return { reason: error }; // the binding's own (a missing dead-letter topic)
    const refused = refusalOf(error, this.#in.topicNames(), this.#lastBroker, subscribing);
    if (refused !== undefined) return { reason: refused };
    return isKafkaJSError(error) ? undefined : { reason: error };
  }

  /**
   * Runs `attempt` again after each outage (with the runner's backoff) until it succeeds:
   * `true`; `false` when `signal` aborted or the binding closed first (an attempt cut
   * short goes on; its outcome is ignored).
   * @param attempt one connect-and-subscribe attempt
   * @param subscribing whether the attempt that just failed reached subscribe
   * @throws the refusal ({@link refusal}) that ended the wait
   */
  async connect(attempt: () => Promise<void>, subscribing: () => boolean, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted || this.#in.closed()) return false;
      try {
        return (await unlessAborted(attempt(), signal)) !== undefined;
      } catch (error) {
        if (signal.aborted || this.#in.closed()) return false;
        const refused = this.refusal(error, subscribing());
        if (refused !== undefined) throw refused.reason;
        if (!(await sleepUnlessAborted(this.unavailable(error), signal))) return false;
      }
    }
  }

  /**
   * A `CRASH` that is not a refusal: reported as a failed attempt, then the consumer runs
   * again after the backoff (KafkaJS's own restart, when it would make one, is replaced).
   * @param restart whether KafkaJS would restart the consumer itself
   * @param run runs the consumer again (`consumer.run` with the binding's configuration)
   */
  crashed(error: unknown, restart: boolean, run: () => void): void {
    const delayMs = this.unavailable(error);
    const sink = this.#in.sink();
    if (this.#in.stopped() || sink?.signal.aborted) return; // shutting down: nothing to restart
    const restartLater = (): void => {
      clearTimeout(this.#restartTimer);
      this.#restartTimer = setTimeout(() => {
        this.#restartTimer = undefined;
        if (this.#in.closed() || this.#in.stopped() || sink?.signal.aborted) return;
        run();
      }, delayMs);
    };
    if (!restart) {
      // KafkaJS gave up on it (e.g. "Failed to find group coordinator"): run it again after the backoff.
      restartLater();
      return;
    }
    // KafkaJS arms its own restart after this event, as late as its retry's maxRetryTime (30 s
    // by default) after a long outage: replace it by the capped backoff (stop() clears it).
    setTimeout(() => {
      if (this.#in.closed() || this.#in.stopped()) return;
      void this.#in.consumer.stop().then(restartLater, restartLater);
    }, 0);
  }

  /** No restart after this (the binding closes). */
  close(): void {
    clearTimeout(this.#restartTimer);
  }

  /** The brokers an error names, else the one that answered last. */
  #brokers(error: unknown): string[] {
    const named = brokersOf(error);
    return named.length > 0 || this.#lastBroker === undefined ? named : [this.#lastBroker];
  }
}
