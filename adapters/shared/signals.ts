/**
 * Graceful shutdown on process signals for the Node-style bindings' `consume()`.
 *
 * @module
 */
import process from "node:process";
import type { ParallelConsumer } from "../../core/consumer/runner.ts";

/**
 * A signal that shuts a consumer down gracefully. Its own type, not `NodeJS.Signals`, so
 * that the bindings' declarations need no `@types/node` (a Bun or Deno user has none).
 */
export type ShutdownSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT" | "SIGBREAK" | "SIGUSR1" | "SIGUSR2";

/**
 * Starts `consumer`; the first of `signals` shuts it down gracefully (a second one gets
 * the runtime's default: exit at once). The handlers are removed once it closed.
 * Resolves once consuming has begun.
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
  await consumer.start();
  return consumer;
}
