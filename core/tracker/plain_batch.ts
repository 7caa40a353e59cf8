/**
 * The plain-batch test shared by the façade and the engines: the common shape of a
 * delivered batch, checked in one pass before the general (error-naming) validation.
 *
 * @module
 */
import { OFFSET_LIMIT } from "./offset.ts";

const LIMIT = OFFSET_LIMIT; // a local copy: some loaders turn imported bindings into getters

/**
 * Whether `offsets[0..count)` is plainly valid: integers in (0, 2^53), strictly
 * increasing, the first not below `floor`. A dense stretch (each offset one past the
 * previous, the common case) costs one comparison per offset. When not plain, the
 * general validation names the offending value (and turns -0 into 0).
 *
 * @example
 * ```ts
 * import { plainBatch } from "./plain_batch.ts";
 * plainBatch(new Float64Array([5, 6, 9]), 3, 5); // true
 * plainBatch(new Float64Array([5, 5.5]), 2, 0); // false
 * ```
 */
export function plainBatch(offsets: Float64Array, count: number, floor: number): boolean {
  if (count === 0) return true;
  const first = offsets[0];
  if (!(first >= floor && first > 0 && first < LIMIT && Math.floor(first) === first)) return false;
  let i = 1;
  while (i < count && offsets[i] === first + i) i++;
  let prev = offsets[i - 1]; // the dense stretch's last: below 2^53 ⟹ every one of it is an exact integer
  if (!(prev < LIMIT)) return false;
  for (; i < count; i++) {
    const o = offsets[i];
    if (!(o > prev && o < LIMIT && Math.floor(o) === o)) return false;
    prev = o;
  }
  return true;
}
