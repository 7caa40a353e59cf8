/**
 * A cancellable sleep, for bounded waits (a drain, the shutdown grace).
 *
 * @module
 */

/**
 * A promise that resolves with `"timeout"` after `ms`, and a `cancel` that clears its timer
 * (the promise then never settles).
 * @example
 * ```ts
 * const bound = sleep(1_000);
 * await Promise.race([work, bound.promise]);
 * bound.cancel();
 * ```
 */
export function sleep(ms: number): { promise: Promise<"timeout">; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}
