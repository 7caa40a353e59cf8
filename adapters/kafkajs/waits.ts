/**
 * Waits of the KafkaJS binding that a shutdown (or another signal) cuts short.
 *
 * @module
 */

/**
 * A sleep that ends early (resolving `false`) when any of `signals` aborts; `true` after `ms`.
 * @example
 * ```ts
 * if (!(await sleepUnlessAborted(1_000, sink.signal))) return; // shutting down
 * ```
 */
export function sleepUnlessAborted(ms: number, ...signals: Array<AbortSignal | undefined>): Promise<boolean> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    if (live.some((s) => s.aborted)) return resolve(false);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    for (const s of live) s.addEventListener("abort", onAbort, { once: true });
  });
}

/** `work`, or `undefined` as soon as `signal` aborts (the work goes on; its outcome is then ignored). */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<{ value: T } | undefined> {
  if (signal.aborted) {
    void work.catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      void work.catch(() => {});
      resolve(undefined);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve({ value })),
      (error: unknown) => (signal.removeEventListener("abort", onAbort), reject(error)),
    );
  });
}
