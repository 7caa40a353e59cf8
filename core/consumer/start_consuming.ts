/**
 * The start of the entry points' `consume()`: it resolves once consuming has begun, and
 * rejects when it never did. `ParallelConsumer.start()` resolves when a shutdown (a process
 * signal, the `signal` option) ends a start still waiting for the cluster, leaving the
 * consumer `stopped`; `consume()` used to pass that on, so a Ctrl-C during an outage made
 * `await consume(…)` succeed with a consumer that had never connected (issue 42).
 *
 * @module
 */
import { StartInterruptedError } from "../errors.ts";
import type { ParallelConsumer } from "./runner.ts";

/**
 * Starts `consumer`; resolves once it consumes.
 * @throws {StartInterruptedError} when a shutdown ended the start before the consumer joined its group
 * @throws whatever `start()` throws (a refusal, giving up on the cluster)
 */
export async function startConsuming<M>(consumer: ParallelConsumer<M>): Promise<void> {
  const startedAt = Date.now();
  await consumer.start();
  if (consumer.state !== "stopped") return; // running (a shutdown after this point is the caller's)
  const cluster = consumer.metrics().cluster;
  throw new StartInterruptedError(Date.now() - startedAt, cluster.attempts, cluster.brokers, cluster.lastError);
}
