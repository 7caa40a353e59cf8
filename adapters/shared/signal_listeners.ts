/**
 * The record signal without Node's listener warning. Every running record of a partition
 * gets its partition's one `AbortSignal`; a handler that passes it on (to a database
 * client, a timer, an SDK call) adds one `abort` listener per record, and Node prints
 * `MaxListenersExceededWarning` once more than 10 wait on one signal, that is with more
 * than 10 records of a partition in flight (`concurrency: 100` does that). The listeners
 * are removed as the calls end; the warning is noise. The bindings lift the limit in their
 * `ConsumerClient.recordSignal`, once per partition assignment, before any handler
 * sees the signal: nothing runs per record.
 *
 * @module
 */
import { setMaxListeners } from "node:events";

/**
 * Lifts the listener limit of a record signal (a binding's `ConsumerClient.recordSignal`).
 * @param signal a partition assignment's record signal
 */
export function unlimitedListeners(signal: AbortSignal): void {
  setMaxListeners(0, signal); // 0: no limit
}
