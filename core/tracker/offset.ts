/**
 * Offset conversion at the edge: number, bigint or decimal string in, a safe
 * integer number out. Everything inside the library works on numbers.
 *
 * @module
 */
import { InvalidOffsetError } from "../errors.ts";

/** An offset as clients hand it over: KafkaJS uses decimal strings, others bigint. */
export type OffsetInput = number | bigint | string;

/** 2^53: offsets and handles are integers below this bound. */
export const OFFSET_LIMIT = 9007199254740992;
const OFFSET_LIMIT_BIG = 9007199254740992n;
const DECIMAL = /^[0-9]{1,16}$/;

/**
 * Converts an offset given as number, bigint or decimal string to a number.
 *
 * @param value the input
 * @param what how to name it in an error, e.g. `"offsets[2]"`
 * @throws {InvalidOffsetError} unless `value` is an integer in [0, 2^53)
 * @example
 * ```ts
 * import { toOffset } from "offset-frontier/tracker";
 * toOffset("42"); // 42
 * toOffset(42n); // 42
 * ```
 */
export function toOffset(value: unknown, what = "offset"): number {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 0) return value + 0; // + 0 turns -0 into 0
  } else if (typeof value === "string") {
    if (DECIMAL.test(value)) {
      const n = Number(value);
      if (n < OFFSET_LIMIT) return n;
    }
  } else if (typeof value === "bigint") {
    if (value >= 0n && value < OFFSET_LIMIT_BIG) return Number(value);
  }
  throw new InvalidOffsetError(what, value);
}
