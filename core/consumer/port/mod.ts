/**
 * The room every other one speaks through: the client port a binding implements
 * (`client.ts`), the exactly-once port and its staging (`transactions.ts`), the events, their
 * hub and the metrics types (`metrics.ts`), the cluster watch (`cluster.ts`), the logger for what
 * nobody listens to (`logger.ts`), the consumer's lifecycle states and a sleep that a signal
 * ends. It imports no other room.
 *
 * @module
 */
export * from "./client.ts";
export * from "./cluster.ts";
export * from "./lifecycle.ts";
export * from "./logger.ts";
export * from "./metrics.ts";
export * from "./sleep.ts";
export * from "./transactions.ts";
export * from "./tracing.ts";
