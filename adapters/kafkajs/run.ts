/**
 * KafkaJS's run of one consumer, as the binding drives it: `consumer.run()` with the
 * `eachBatch` that hands each batch to the runner, the run's first join (a stop issued
 * inside it is lost), and a disconnect that waits for that join.
 *
 * - `consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch })`;
 *   `eachBatch` registers the whole batch (`next = batch.lastOffset() + 1`: control
 *   records and aborted messages are not in `batch.messages`), resolves
 *   `batch.lastOffset()` only to move the fetch cursor, and returns at once: records
 *   run on the runner's worker pool, and backpressure is `pause`/`resume` (a slow
 *   `eachBatch` would block every partition of the same broker fetch). A batch
 *   KafkaJS's filter let aborted records into is refused (adapters/kafkajs/read_committed.ts).
 * - KafkaJS forgets a runner stopped inside its first join (Runner.start: stop() does
 *   nothing until the runner runs, and the consumer drops it); it goes on heartbeating as a
 *   member owning partitions nobody processes. So the disconnect waits for `consumer.run()`
 *   to return (at most 10 s), and after a close the run is stopped again
 *   whenever KafkaJS restarts or rejoins it.
 *
 * @module
 */
import type { Consumer, KafkaMessage } from "./types.ts";
import { batchOffsets } from "../shared/batch_offsets.ts";
import { checkCorrected, type KafkaJSBatchLike } from "./read_committed.ts";
import type { ClientSink } from "../../core/consumer/port/mod.ts";
import { endOffsetOf } from "../shared/end_offsets.ts";

/** How long `close()` lets a join under way finish before it disconnects anyway. */
const JOIN_WAIT_MS = 10_000;

/** `consumer.run()` of one KafkaJS consumer: its configuration, its first join, its disconnect. */
export class KafkaJSRun {
  readonly #consumer: Consumer;
  #runStarting: Promise<void> | undefined; // consumer.run() until its first join returned (KafkaJS's Runner.start)
  #runConfig: Parameters<Consumer["run"]>[0] | undefined;

  /** @param consumer the KafkaJS consumer the binding drives */
  constructor(consumer: Consumer) {
    this.#consumer = consumer;
  }

  /** Whether {@link configure} was called: a run can be (re)started. */
  get configured(): boolean {
    return this.#runConfig !== undefined;
  }

  /**
   * Sets what every run does: auto-commit off, each batch handed to `sink` whole.
   * @param sink the runner's sink
   * @param revoke the orderly revoke, awaited when the heartbeat inside `eachBatch` finds the group rebalancing
   */
  configure(sink: ClientSink<KafkaMessage>, revoke: () => Promise<void>): void {
    this.#runConfig = {
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        try {
          checkCorrected(batch as KafkaJSBatchLike);
        } catch (refused) {
          sink.failed(refused); // never handed on unverified; not resolved: nothing moves
          return;
        }
        const messages = batch.messages;
        const offsets = batchOffsets(messages);
        const last = batch.lastOffset();
        const taken = sink.deliver({
          topic: batch.topic,
          partition: batch.partition,
          messages,
          offsets,
          next: Number(last) + 1,
          endOffset: endOffsetOf(batch.highWatermark),
        });
        // Moves only the fetch cursor (autoCommit is off). Not taken: fetched again later.
        if (taken) resolveOffset(last);
        // KafkaJS heartbeats only once its interval passed, so this is usually a no-op. When it
        // finds the group rebalancing, KafkaJS rejoins only after eachBatch settles: the revoke
        // is awaited here (drain within the bound, commit in the old generation, which the
        // broker still accepts while the group waits for this member's JoinGroup).
        try {
          await heartbeat();
        } catch (error) {
          if ((error as { type?: unknown }).type === "REBALANCE_IN_PROGRESS") await revoke();
          throw error;
        }
      },
    };
  }

  /**
   * `consumer.run()`, which returns once KafkaJS's runner has joined the group. A stop issued
   * before that orphans the runner in KafkaJS (its stop does nothing until the runner runs,
   * and the consumer then forgets it: it goes on heartbeating, a member owning partitions
   * nobody processes, until the process dies), so close() waits for it first.
   */
  run(): Promise<void> {
    const run = this.#consumer.run(this.#runConfig);
    const starting: Promise<void> = this.#runStarting = run.then(() => {}, () => {}).finally(() => {
      if (this.#runStarting === starting) this.#runStarting = undefined;
    });
    return run;
  }

  /**
   * Disconnects the KafkaJS consumer, but not inside KafkaJS's first join of a run, where a
   * stop is lost (see {@link run}): after that join returned. Bounded: a join the cluster never
   * answers (an outage) is cut short by the disconnect.
   */
  async disconnect(): Promise<void> {
    const starting = this.#runStarting;
    if (starting) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([starting, new Promise<void>((r) => (timer = setTimeout(r, JOIN_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await this.#consumer.disconnect();
  }

  /** Once the binding closes: the run stays stopped whenever KafkaJS restarts or rejoins it (these listeners stay registered). */
  keepStopped(): void {
    const c = this.#consumer;
    // KafkaJS arms its restart timer only after a crash's own disconnect returned, so a
    // crash during this close can bring the consumer back into the group, owning partitions
    // nobody processes: stop it again whenever it restarts or rejoins (these stay registered).
    c.on(c.events.CRASH, (e) => {
      if (e.payload.restart) setTimeout(() => void c.stop().catch(() => {}), 0); // after the timer is armed
    });
    // GROUP_JOIN is emitted from inside KafkaJS's join, where a stop does nothing (the run goes
    // on, heartbeating and owning partitions): disconnect once the join has returned.
    c.on(c.events.GROUP_JOIN, () => void setTimeout(() => void c.disconnect().catch(() => {}), 0));
  }
}
