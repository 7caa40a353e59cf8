/**
 * Options handed on without their unset fields: under `exactOptionalPropertyTypes` an
 * option given as `undefined` is not the same as one left out, and a binding passes on
 * what the user left out as left out.
 *
 * @module
 */

/** `T` with its `undefined` values dropped and every field optional. */
export type Defined<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/**
 * A copy of `options` without its `undefined` fields.
 * @param options the options
 * @example
 * ```ts
 * import { defined } from "./defined.ts";
 * defined({ fromBeginning: undefined, maxWaitTime: 100 }); // { maxWaitTime: 100 }
 * ```
 */
export function defined<T extends object>(options: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) if (v !== undefined) out[k] = v;
  return out as Defined<T>;
}
