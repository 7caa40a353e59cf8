/**
 * Learning that a handler's promise settled, without two new closures per record: each
 * record whose handler returned a native promise borrows a {@link Settler}, a pair of
 * callbacks made once and reused, for as long as its promise is pending. A native promise
 * (its `then` the intrinsic `Promise.prototype.then`) calls exactly one of them, once; only
 * then is the settler free for another record, so no callback can ever end a record other
 * than the one it was lent for. Anything else that has a `then` (a thenable may call back
 * late, twice, or both ways) gets closures of its own, of which only the first call counts.
 *
 * @module
 */

const nativeThen = Promise.prototype.then;

/** `result`'s `then` when it is a thenable (read once: a getter may answer differently twice). */
export function thenOf(result: unknown): PromiseLike<unknown>["then"] | undefined {
  if (result === null || typeof result !== "object") return undefined;
  const then = (result as PromiseLike<unknown>).then;
  return typeof then === "function" ? then : undefined;
}

/**
 * Runs `ok` or `failed` once `result` (whose `then` is `then`) settled, and only once: a native
 * promise calls back exactly once; any other thenable gets guards, so that only its first call
 * back counts, and a `then` that throws is a failure.
 *
 * @example
 * ```ts
 * import { onSettled } from "./settlers.ts";
 * const twice = { then: (ok: () => void) => { ok(); ok(); } };
 * let ends = 0;
 * onSettled(twice, twice.then, () => ends++, () => ends++); // ends === 1
 * ```
 */
export function onSettled(
  result: PromiseLike<unknown>,
  then: PromiseLike<unknown>["then"],
  ok: () => void,
  failed: (error: unknown) => void,
): void {
  if (then === nativeThen && result instanceof Promise) {
    nativeThen.call(result, ok, failed);
    return;
  }
  let called = false;
  try {
    then.call(result, () => {
      if (!called) (called = true, ok());
    }, (error: unknown) => {
      if (!called) (called = true, failed(error));
    });
  } catch (error) {
    if (!called) (called = true, failed(error));
  }
}

/** What is done once a record's promise settled. */
export interface SettleEnds<W> {
  /** The attempt of `work` succeeded. */
  ok(work: W): void;
  /** The attempt of `work` failed with `error`. */
  failed(work: W, error: unknown): void;
}

/**
 * {@link Settlers.watch} for anything but a native promise: closures of its own. Kept out of
 * `watch`, which would otherwise allocate a context for `work` on every call, the native
 * path's too (a closure over a parameter makes its function allocate one on entry).
 */
function watchOther<W>(ends: SettleEnds<W>, work: W, result: PromiseLike<unknown>, then: PromiseLike<unknown>["then"]): void {
  onSettled(result, then, () => ends.ok(work), (error: unknown) => ends.failed(work, error));
}

/** A reusable pair of callbacks, lent to one pending record at a time. */
class Settler<W> {
  /** The record whose promise it waits for (`undefined`: free). */
  work: W | undefined = undefined;
  readonly ok: () => void;
  readonly failed: (error: unknown) => void;

  constructor(pool: Settlers<W>) {
    this.ok = () => pool.settled(this, false, undefined);
    this.failed = (error: unknown) => pool.settled(this, true, error);
  }
}

/** The settlers of one runner: as many as records have been pending at once, at most. */
export class Settlers<W> {
  readonly #ends: SettleEnds<W>;
  readonly #free: Settler<W>[] = [];
  #made = 0;

  /**
   * Settlers that end records through `ends`.
   * @param ends what is done once a record's promise settled
   */
  constructor(ends: SettleEnds<W>) {
    this.#ends = ends;
  }

  /**
   * The attempt of `work` returned `result`, whose `then` is `then`: `ends.ok` or
   * `ends.failed` runs once it settled (for a native promise exactly once).
   */
  watch(work: W, result: PromiseLike<unknown>, then: PromiseLike<unknown>["then"]): void {
    if (then === nativeThen && result instanceof Promise) {
      const s = this.#free.pop() ?? (this.#made++, new Settler<W>(this));
      s.work = work;
      nativeThen.call(result, s.ok, s.failed);
      return;
    }
    watchOther(this.#ends, work, result, then);
  }

  /** Settlers made so far: at most as many as records were pending on native promises at once. */
  get made(): number {
    return this.#made;
  }

  /** @internal `s` was called back: it is free again (before the record ends, which may lend it at once). */
  settled(s: Settler<W>, failed: boolean, error: unknown): void {
    const work = s.work!;
    s.work = undefined;
    this.#free.push(s);
    if (failed) this.#ends.failed(work, error);
    else this.#ends.ok(work);
  }
}
