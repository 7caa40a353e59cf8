/**
 * Wraps a client binding so that a test sees what the binding reports to the runner
 * (assignments, revokes, losses, batches) without changing it: each tap runs just before
 * the runner hears of it (`revoked`: just after the runner's revoke finished). Shared by the
 * real-broker suites (bindings.ts) and the chaos members (test/chaos/member_port.ts).
 *
 * @module
 */
import type { ClientSink, ConsumerClient, DeliveredBatch, TopicPartition } from "../../core/mod.ts";

/** What a test taps; every tap optional. */
export interface ClientTaps<M> {
  /** A new assignment (the whole one, or with `incremental` the partitions added). */
  assigned?(partitions: readonly TopicPartition[], incremental: boolean): void;
  /** An orderly revoke begins (`undefined`: every partition). */
  revoking?(partitions: readonly TopicPartition[] | undefined): void;
  /** The runner finished an orderly revoke. */
  revoked?(partitions: readonly TopicPartition[] | undefined): void;
  /** Partitions were lost (`undefined`: every partition). */
  lost?(partitions: readonly TopicPartition[] | undefined): void;
  /** A batch is delivered. */
  deliver?(batch: DeliveredBatch<M>): void;
}

/**
 * `client`, with `taps` called on what it reports to the runner.
 * @param client the binding's client
 * @param taps what to call
 */
export function tapClient<M>(client: ConsumerClient<M>, taps: ClientTaps<M>): ConsumerClient<M> {
  return new Proxy(client, {
    get(target, prop) {
      if (prop !== "start") {
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      }
      return (sink: ClientSink<M>) =>
        target.start({
          unavailable: (error, brokers) => sink.unavailable(error, brokers),
          available: () => sink.available(),
          signal: sink.signal,
          assigned: (partitions, committed, incremental) => {
            taps.assigned?.(partitions, incremental === true);
            sink.assigned(partitions, committed, incremental);
          },
          revoking: async (partitions, options) => {
            taps.revoking?.(partitions);
            await sink.revoking(partitions, options);
            taps.revoked?.(partitions);
          },
          lost: (partitions) => {
            taps.lost?.(partitions);
            sink.lost(partitions);
          },
          deliver: (batch) => {
            taps.deliver?.(batch);
            return sink.deliver(batch);
          },
          failed: (error) => sink.failed(error),
          ...(sink.owned ? { owned: (sentAt: number) => sink.owned!(sentAt) } : {}),
        });
    },
  });
}
