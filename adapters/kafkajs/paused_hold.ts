/**
 * Backpressure that does not put KafkaJS to sleep. The runner pauses a partition that
 * retains too much (`consumer.pause`). When every partition a KafkaJS fetcher reads is
 * paused, KafkaJS finds nothing to fetch and sleeps `maxWaitTimeInMs` (5 s by default)
 * before it looks again, and a `resume` does not wake it: with an async handler each pause
 * of the whole assignment stalled the consumer for up to that long (7,400 records/s instead
 * of 270,000 with KafkaJS's default, bench:consumer --async-handler, Node 24).
 *
 * So while every assigned partition is paused, `eachBatch` holds on (KafkaJS cannot fetch
 * while it runs anyway) until a partition resumes, heartbeating meanwhile, and KafkaJS
 * fetches at once when it returns. A partial pause is left to KafkaJS (a held `eachBatch`
 * would keep the other partitions of its broker from being fetched). Several brokers: a
 * broker whose partitions are all paused while others are not still sleeps in KafkaJS.
 *
 * @module
 */
import type { TopicPartition } from "../../core/consumer/client.ts";

/** How long a hold waits for a resume before it heartbeats and looks again (ms). */
export const HOLD_CHECK_MS = 500;

/** The paused partitions KafkaJS reports (`consumer.paused()`). */
export interface PausedSource {
  paused(): Array<{ topic: string; partitions: number[] }>;
}

/** The hold of one binding: woken by its resumes. */
export class PausedHold {
  #wake: Array<() => void> = [];

  /** A partition resumed: a hold looks again at once. */
  resumed(): void {
    const w = this.#wake;
    this.#wake = [];
    for (const f of w) f();
  }

  /**
   * Whether every one of `assigned` (at least one) is paused in `consumer`.
   * @param consumer KafkaJS's consumer
   * @param assigned the current assignment
   */
  allPaused(consumer: PausedSource, assigned: readonly TopicPartition[]): boolean {
    if (assigned.length === 0) return false;
    const paused = new Set<string>();
    try {
      for (const { topic, partitions } of consumer.paused()) for (const p of partitions) paused.add(`${topic}\u0000${p}`);
    } catch {
      return false; // not running
    }
    return assigned.every((tp) => paused.has(`${tp.topic}\u0000${tp.partition}`));
  }

  /**
   * Holds while `held()` says so: waits for a resume (or {@link HOLD_CHECK_MS}), then
   * `beat()` (KafkaJS's heartbeat inside eachBatch, which throws when the group rebalances),
   * and looks again.
   */
  async hold(held: () => boolean, beat: () => Promise<void>): Promise<void> {
    while (held()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, HOLD_CHECK_MS);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#wake.push(done);
      });
      await beat();
    }
  }
}
