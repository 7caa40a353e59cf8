/**
 * Running records: the record and batch runners and the contexts their handlers
 * get, retries with backoff and retry-after, stuck records, the rate limit, the user's pause,
 * and the delivery that registers a batch and starts its records. Imports the commits, dispatch
 * and port rooms.
 *
 * @module
 */
export * from "./batch.ts";
export * from "./batch_context.ts";
export * from "./delivery.ts";
export * from "./direct_batch.ts";
export * from "./direct_context.ts";
export * from "./partition_stopped.ts";
export * from "./rate_limit.ts";
export * from "./record_context.ts";
export * from "./record_runner.ts";
export * from "./retry.ts";
export * from "./retry_after.ts";
export * from "./settlers.ts";
export * from "./stuck.ts";
export * from "./user_pause.ts";
