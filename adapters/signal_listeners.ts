/**
 * The record signal without Node's listener warning. Every running record of a partition
 * gets its partition's one `AbortSignal`; a handler that passes it on (to a database
 * client, a timer, an SDK call) adds one `abort` listener per record, and Node prints
 * `MaxListenersExceededWarning` once more than 10 wait on one signal, that is with more
 * than 10 records of a partition in flight (`concurrency: 100` does that). The listeners
 * are removed as the calls end; the warning is noise. The bindings wrap the handler with
 * {@link unlimitedSignalListeners}: the limit is lifted once per signal.
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import type { Handler } from "../core/consumer/runner.ts";

/**
 * `handler`, lifting the listener limit of each record signal it sees (once per signal).
 * Anything that is not a function is returned as it is, for the runner to reject.
 */
export function unlimitedSignalListeners<M>(handler: Handler<M>): Handler<M> {
  if (typeof handler !== "function") return handler;
  const lifted = new WeakSet<AbortSignal>(); // a partition assignment's signal is lifted once
  let last: AbortSignal | undefined; // the signal of the previous call: consecutive records share one
  return (message, context) => {
    const signal = context.signal;
    if (signal !== last) {
      last = signal;
      if (!lifted.has(signal)) {
        lifted.add(signal);
        setMaxListeners(0, signal); // 0: no limit
      }
    }
    return handler(message, context);
  };
}
