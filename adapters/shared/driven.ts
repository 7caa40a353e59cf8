/**
 * One client consumer, one offset-frontier consumer: a binding takes the client's consumer
 * it drives for its life, and a second binding given the same one is refused at
 * construction. Two would each join the group and fetch through it, and every record would
 * be handled twice (the KafkaJS client runs a consumer once; `@platformatic/kafka` fetches
 * for both). Confluent's binding creates its own consumer, so it needs no such check.
 *
 * @module
 */
import { InvalidArgumentError } from "../../core/errors.ts";

/** Client consumers already driven by a binding (module-level: across every binding of the process). */
const taken = new WeakSet<object>();

/**
 * Throws when `consumer` is already driven by another offset-frontier consumer.
 * @param consumer the client's consumer
 * @param remedy why one consumer serves one binding, and how to make another (ends the message)
 * @throws {InvalidArgumentError} when it is taken
 */
export function refuseTaken(consumer: object, remedy: string): void {
  if (taken.has(consumer)) throw new InvalidArgumentError(`consumer is already driven by another offset-frontier consumer ${remedy}`);
}

/** Takes `consumer` for good; call last in a binding's construction, so that a refused construction takes nothing. */
export function take(consumer: object): void {
  taken.add(consumer);
}

/**
 * Frees `consumer` again: its binding was built but never started, because the construction
 * around it (a runner option, the exactly-once port) was refused afterwards; a refused
 * construction takes nothing.
 * @param consumer the client's consumer given to that binding
 */
export function release(consumer: object): void {
  taken.delete(consumer);
}
