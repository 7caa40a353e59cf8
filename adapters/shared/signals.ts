/**
 * Graceful shutdown on process signals for the Node-style bindings' `consume()`.
 *
 * @module
 */
import process from "node:process";
import type { ParallelConsumer } from "../../core/consumer/runner.ts";
import { startConsuming } from "../../core/consumer/start_consuming.ts";
import type { ShutdownSignal } from "./shutdown_signal.ts";

/**
 * Starts `consumer`; the first of `signals` shuts it down gracefully (a second one gets
 * the runtime's default: exit at once). The handlers are removed once it closed.
 * Resolves once consuming has begun; rejects with a `StartInterruptedError` when a shutdown
 * came first.
 */
export async function startWithSignals<M>(consumer: ParallelConsumer<M>, signals: readonly ShutdownSignal[]): Promise<ParallelConsumer<M>> {
  const shutdown = (): void => {
    release();
    void consumer.shutdown();
  };
  const release = (): void => {
    for (const s of signals) process.off(s, shutdown);
  };
  for (const s of signals) process.once(s, shutdown);
  void consumer.closed.then(release);
  await startConsuming(consumer);
  return consumer;
}
