/**
 * The key of a topic-partition in the consumer's maps.
 *
 * @module
 */

/**
 * A map key for `topic`/`partition`, distinct for every pair (topic names hold no NUL).
 * @example
 * ```ts
 * tpKey("orders", 3); // "orders\u00003"
 * ```
 */
export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
