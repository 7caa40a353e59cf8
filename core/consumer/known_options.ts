/**
 * Unknown option names are errors: in JavaScript a misspelled option (`concurency`) would
 * otherwise run silently with the default. Each options object is checked against the
 * names its type declares (a `Record<keyof T, true>`, so the list cannot drift from the
 * type), and the error names the unknown key and the nearest known one.
 *
 * @module
 */
import { describe, InvalidArgumentError } from "../errors.ts";

/** The option names of a type, as a record the compiler checks against it. */
export type OptionNames<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws {@link InvalidArgumentError} when `value` (an options object; anything else is
 * left to the caller's own checks) has a key that `known` does not name.
 * @param what how the object is called in messages (e.g. `options.retry`)
 * @param value the options object as given
 * @param known the names it may have
 * @example
 * ```ts
 * import { checkKnownOptions } from "./known_options.ts";
 * checkKnownOptions("options", { concurency: 10 }, { concurrency: true, ordering: true });
 * // throws: options has an unknown option "concurency" (did you mean "concurrency"?)
 * ```
 */
export function checkKnownOptions(what: string, value: unknown, known: Readonly<Record<string, true>>): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (Object.prototype.hasOwnProperty.call(known, key)) continue;
    const names = Object.keys(known);
    const near = nearest(key, names);
    throw new InvalidArgumentError(
      `${what} has an unknown option ${describe(key)}` +
        (near !== undefined ? ` (did you mean ${JSON.stringify(near)}?)` : `; known: ${names.join(", ")}`),
    );
  }
}

/** The known name closest to `key` by edit distance (case-insensitive), if close enough to be a slip. */
function nearest(key: string, names: readonly string[]): string | undefined {
  let best: string | undefined, bestDistance = Infinity;
  for (const name of names) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) (best = name), (bestDistance = d);
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}
