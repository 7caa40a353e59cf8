/**
 * Which record runs next: per-partition lanes and their queues, the ordering modes
 * (`key`: only the keys in flight are held, a record meeting a held key waits on its holder's
 * chain), bounded in-flight work, backpressure by pause and resume, the drain of a stopping lane,
 * key distinctness for batches and each lane's log end. Imports only the port room.
 *
 * @module
 */
export * from "./backpressure.ts";
export * from "./dispatch_hooks.ts";
export * from "./dispatch_options.ts";
export * from "./dispatcher.ts";
export * from "./distinct_keys.ts";
export * from "./fifo.ts";
export * from "./held_keys.ts";
export * from "./key_chains.ts";
export * from "./lane.ts";
export * from "./lane_drain.ts";
export * from "./lane_set.ts";
export * from "./log_end.ts";
export * from "./partition_key.ts";
export * from "./ready_queue.ts";
export * from "./record_keys.ts";
export * from "./work.ts";
