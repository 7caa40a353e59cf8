/**
 * The completed-set encoder (see completed_set.ts): validates, lets the size budget choose,
 * writes the chosen payload and turns the bits, with their checksum, into the string.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../errors.ts";
import {
  ALPHABET,
  capacityBits,
  charsFor,
  checksum,
  CHECK_BITS,
  DEFAULT_BUDGET,
  FORMAT_RUNS,
  MAX_METADATA_LENGTH,
  readAt,
} from "./wire.ts";
import { BitWriter, codeName } from "./codes.ts";
import { normalise, norm, type RunsInput } from "./input.ts";
import { choose, finishedBelow, plan } from "./budget.ts";

/** Options of {@link encodeCompletedSet}. */
export interface EncodeOptions {
  /** Maximum length of the metadata string in characters; default 4,096 (the broker's `offset.metadata.max.bytes`). */
  budget?: number;
}

/** What {@link encodeCompletedSet} produced. */
export interface Encoded {
  /** The metadata string (printable ASCII, at most the budget). */
  metadata: string;
  /**
   * One past the last offset it claims anything about: the input's `end` (less a trailing
   * unfinished run, which says nothing: one past the last finished offset), or less when over
   * the budget. The decoded set's `end` is the same.
   */
  end: number;
  /** How many offsets of [base, end) it claims finished (gaps included). */
  finished: number;
  /** The encoding that won: `"bitmap"` or `"runs:<unfinished code>/<finished code>"` (e.g. `runs:eg0/rice2`). */
  format: string;
}

const W = new BitWriter();

/** Writes the runs payload for [base, cut) with codes (cu, cf). */
function writeRuns(cu: number, cf: number, cut: number): void {
  const { base, runs, count } = norm;
  const first = count > 0 ? runs[0] : norm.end;
  W.small(first > base ? 1 : 0, 1);
  W.small(cu, 6);
  W.small(cf, 6);
  if (first > base) {
    W.code(Math.min(first, cut) - base - 1, cf);
    if (first >= cut) return;
  }
  for (let i = 0; i < count; i++) {
    const s = runs[2 * i];
    if (s >= cut) return;
    const l = runs[2 * i + 1];
    W.code(l - 1, cu);
    const fs = s + l;
    const fe = i + 1 < count ? runs[2 * i + 2] : norm.end;
    W.code(Math.min(fe, cut) - fs - 1, cf);
    if (fe >= cut) return;
  }
}

/** Writes the bitmap payload for [base, cut). */
function writeBitmap(cut: number): void {
  const { base, runs, count } = norm;
  let at = base;
  for (let i = 0; i < count && at < cut; i++) {
    const s = runs[2 * i];
    W.ones(at - base, Math.min(s, cut) - base);
    at = s + runs[2 * i + 1];
  }
  if (at < cut) W.ones(at - base, cut - base);
  W.pos = cut - base;
}

const outChars = new Uint8Array(MAX_METADATA_LENGTH);
const DECODER = new TextDecoder("latin1");

/** Turns the writer's bits (payload then padding up to the check) into the string. */
function finish(format: number, topic: string, partition: number, base: number, payloadBits: number): string {
  const n = charsFor(payloadBits + CHECK_BITS);
  const total = capacityBits(n);
  const padded = total - CHECK_BITS;
  const wbuf = W.buf;
  const check = checksum(format, n, topic, partition, base, wbuf, padded);
  W.pos = padded;
  W.bits(check, CHECK_BITS);
  // characters: c0 = 16·format + first 4 bits, then 13-bit pairs, then a 6-bit single
  outChars[0] = ALPHABET[16 * format + (wbuf[0] >>> 4)];
  let bit = 4;
  let c = 1;
  while (c < n) {
    if (n - c >= 2) {
      const v = readAt(wbuf, bit, 13);
      bit += 13;
      const hi = Math.floor(v / 91);
      outChars[c++] = ALPHABET[hi];
      outChars[c++] = ALPHABET[v - 91 * hi];
    } else {
      outChars[c++] = ALPHABET[readAt(wbuf, bit, 6)];
      bit += 6;
    }
  }
  // short strings: fromCharCode is cheaper than a TextDecoder call
  return n <= 2048 ? String.fromCharCode.apply(null, outChars.subarray(0, n) as unknown as number[]) : DECODER.decode(outChars.subarray(0, n));
}

/**
 * Encodes the finished offsets of [base, end) for a commit of offset `base` on (topic, partition).
 * If the whole set does not fit the budget, encodes the longest prefix [base, end′) that fits
 * (end′ ≤ end; everything ≥ end′ then counts as unfinished). Works on the runs (O(runs)), never
 * per offset; a bitmap is written a byte at a time.
 *
 * @param topic the topic (bound by the check)
 * @param partition the partition, an integer in [0, 2^31)
 * @param input the committed offset (`base`), `end` and the unfinished runs
 * @param options `budget`: the longest string allowed (default 4,096)
 * @returns the metadata and what it claims, or `undefined` when nothing above base is finished
 *   (or nothing fits the budget)
 * @throws {InvalidArgumentError} for a malformed input (naming the value), a partition or budget out of range
 */
export function encodeCompletedSet(topic: string, partition: number, input: RunsInput, options?: EncodeOptions): Encoded | undefined {
  if (typeof topic !== "string") throw new InvalidArgumentError(`topic must be a string; got ${describe(topic)}`);
  if (!Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new InvalidArgumentError(`partition must be an integer in [0, 2^31); got ${describe(partition)}`);
  }
  const budget = options?.budget ?? DEFAULT_BUDGET;
  if (!Number.isInteger(budget) || budget < 1 || budget > MAX_METADATA_LENGTH) {
    throw new InvalidArgumentError(`options.budget must be an integer in [1, ${MAX_METADATA_LENGTH}]; got ${describe(budget)}`);
  }
  normalise(input);
  const { base, end } = norm;
  if (end <= base) return undefined; // nothing finished
  const capacity = capacityBits(budget) - CHECK_BITS;
  if (capacity <= 0) return undefined;

  if (!choose(capacity)) return undefined;
  const { format, cut, cu, cf } = plan;
  const totalChars = Math.min(budget, charsFor(Math.min(capacity, plan.bits) + CHECK_BITS));
  W.reset(((capacityBits(totalChars) + 7) >>> 3) + 8);
  if (format === FORMAT_RUNS) writeRuns(cu, cf, cut);
  else writeBitmap(cut);
  const payloadBits = W.pos;
  const metadata = finish(format, topic, partition, base, payloadBits);
  return {
    metadata,
    end: cut,
    finished: finishedBelow(cut),
    format: format === FORMAT_RUNS ? `runs:${codeName(cu)}/${codeName(cf)}` : "bitmap",
  };
}
