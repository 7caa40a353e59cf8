/**
 * The completed-set encoder's code choice (see completed_set.ts): per class of runs
 * (unfinished, finished), one pass tallies the exact size of every code, and the smallest wins.
 *
 * @module
 */
import { LIMIT } from "./wire.ts";
import { bitLength, CODES, POW2 } from "./codes.ts";

const MAX_BITLEN = 56; // bit lengths of values < 2^55
const SMALL = 64; // values counted one by one before they are tallied

/** @internal Per-class tallies from which the size of every code follows exactly. */
export class Tally {
  count = 0;
  /** the largest value */
  max = 0;
  /** values by bit length */
  readonly byLength = new Float64Array(MAX_BITLEN + 1);
  /** +2 over the orders k where v + 2^k gains a bit (a difference array over k) */
  readonly carry = new Float64Array(CODES + 1);
  /** how many values have bit j set */
  readonly bits = new Float64Array(MAX_BITLEN);

  /** values below SMALL, counted by value; folded into the tallies above by `choose` */
  readonly small = new Float64Array(SMALL);

  reset(): void {
    this.count = 0;
    this.max = 0;
    this.byLength.fill(0);
    this.carry.fill(0);
    this.bits.fill(0);
    this.small.fill(0);
  }

  add(v: number): void {
    this.count++;
    if (v > this.max) this.max = v;
    if (v < SMALL) this.small[v]++; // most run lengths: one increment, folded in later
    else this.#tally(v, 1);
  }

  /** Tallies `times` values v. */
  #tally(v: number, times: number): void {
    const b = bitLength(v);
    this.byLength[b] += times;
    // EG order k < b: v + 2^k has b + 1 bits iff bits k..b−1 of v are all ones, i.e. k ≥ b − t
    // where t counts v's leading ones.
    if (b > 0) {
      const t = b - bitLength(POW2[b] - 1 - v);
      const from = b - t;
      if (from < CODES) {
        this.carry[from] += 2 * times;
        this.carry[b < CODES ? b : CODES] -= 2 * times;
      }
    }
    let hi = Math.floor(v / 4294967296);
    let lo = (v - hi * 4294967296) >>> 0;
    while (lo !== 0) {
      const low = lo & -lo;
      this.bits[31 - Math.clz32(low)] += times;
      lo = (lo ^ low) >>> 0;
    }
    while (hi !== 0) {
      const low = hi & -hi;
      this.bits[63 - Math.clz32(low)] += times;
      hi = (hi ^ low) >>> 0;
    }
  }

  /** The smallest code and its total size in bits, into `best`. */
  choose(best: { code: number; size: number }): void {
    best.code = 0;
    best.size = Infinity;
    if (this.count === 0) {
      best.size = 0;
      return;
    }
    const small = this.small;
    for (let v = 0; v < SMALL; v++) {
      if (small[v] !== 0) {
        this.#tally(v, small[v]);
        small[v] = 0;
      }
    }
    const top = bitLength(this.max); // every value has at most `top` bits
    let low = 0;
    while (this.byLength[low] === 0) low++;
    // orders above top + 1 only cost more (every value then takes k + 1 bits, or 1 + k)
    const kMax = Math.min(CODES - 1, top + 1);
    let carry = 0;
    for (let k = 0; k <= kMax; k++) {
      carry += this.carry[k];
      if (this.max + POW2[k] > LIMIT) break; // v + 2^k must stay exact (larger k only cost more here)
      let eg = carry;
      for (let b = low; b <= top; b++) {
        const c = this.byLength[b];
        if (c !== 0) eg += c * (k >= b ? k + 1 : 2 * b - 1 - k);
      }
      if (eg < best.size) {
        best.size = eg;
        best.code = k;
      }
      let rice = this.count * (1 + k);
      for (let j = k; j < top; j++) if (this.bits[j] !== 0) rice += this.bits[j] * POW2[j - k];
      if (rice < best.size) {
        best.size = rice;
        best.code = CODES + k;
      }
    }
  }
}
