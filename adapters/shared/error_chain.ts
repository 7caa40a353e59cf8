/**
 * An error with its causes and an aggregate's errors, as the bindings read a client's
 * errors (a retry wrapper's cause, a MultipleErrors' list).
 *
 * @module
 */

/** The error, its causes and an aggregate's `errors`, outermost first, each once, at most `max`. */
export function errorChain<T extends object>(error: unknown, max: number): T[] {
  const out: T[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < max) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || out.includes(e as T)) continue;
    out.push(e as T);
    const x = e as { cause?: unknown; errors?: unknown };
    if (x.cause !== undefined) queue.push(x.cause);
    if (Array.isArray(x.errors)) queue.push(...x.errors);
  }
  return out;
}
