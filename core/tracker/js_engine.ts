/**
 * The pure-TypeScript engine: the reference every other engine must agree with,
 * and the fallback where WebAssembly is unavailable.
 *
 * Storage (per tracker, all typed arrays, grown by doubling up to the capacity):
 * - `bits`: the completed bitmap, one bit per retained record at ring position
 *   `seq & mask`; bits of seqs in [head, issued) are exact, others are stale and
 *   are cleared when their position is issued again.
 * - `summary`: one bit per bitmap word; set ⟹ that word is all ones, so the
 *   prefix advance skips 32 (or 1,024) finished records per step.
 * - `runSeq`/`runOff`: offsets as runs; a new run starts only at a gap, so dense
 *   offsets cost nothing per record.
 *
 * @module
 */
import { Completion, type Engine, type EngineTracker } from "./engine.ts";
import { plainBatch } from "./plain_batch.ts";

const MIN_RING = 1024; // bits; keeps the 1,024-record summary step aligned
const MIN_RUNS = 16;

/** The pure-TS engine (see the module doc for its storage layout). */
export const jsEngine: Engine = {
  kind: "js",
  open(base: number, start: number, capacity: number): EngineTracker {
    return new JsTracker(base, start, capacity);
  },
};

function ctz(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/**
 * The first seq in [pos, end) whose record is pending (bit clear) in a ring of `mask + 1`
 * bits, else end: ctz in the word, then whole words of completed records skipped via the
 * summary. The ring's words are a multiple of 32 (≥ 1,024 bits), so a summary skip ends
 * at the ring's end at the latest, where the scan wraps to position 0.
 */
function nextPending(bits: Int32Array, summary: Int32Array, mask: number, pos: number, end: number): number {
  while (pos < end) {
    const p = pos & mask;
    const off = p & 31;
    const zeros = ~bits[p >>> 5] & (-1 << off);
    if (zeros !== 0) {
      pos += ctz(zeros) - off;
      return pos < end ? pos : end;
    }
    pos += 32 - off;
    while (pos < end) { // at a word boundary: skip every word the summary marks as all ones
      const w = (pos & mask) >>> 5;
      const sb = w & 31;
      const notFull = ~summary[w >>> 5] & (-1 << sb);
      if (notFull === 0) {
        pos += (32 - sb) << 5;
        continue;
      }
      pos += (ctz(notFull) - sb) << 5;
      break;
    }
  }
  return end;
}

/** The first seq in [pos, end) whose record is completed (bit set), else end: a word of pending records is one step. */
function nextCompleted(bits: Int32Array, mask: number, pos: number, end: number): number {
  while (pos < end) {
    const p = pos & mask;
    const off = p & 31;
    const ones = bits[p >>> 5] & (-1 << off);
    if (ones !== 0) {
      pos += ctz(ones) - off;
      return pos < end ? pos : end;
    }
    pos += 32 - off;
  }
  return end;
}

/**
 * The last run starting at or before `seq` among runs [r, tail) (absolute indices), given
 * runSeq(r) ≤ seq: galloping from r (steps 1, 2, 4, …), then bisection, so finding the
 * run d runs on costs O(log d).
 */
function runAtSeq(runSeq: Float64Array, rm: number, r: number, tail: number, seq: number): number {
  let step = 1;
  while (r + step < tail && runSeq[(r + step) & rm] <= seq) {
    r += step;
    step *= 2;
  }
  let hi = r + step < tail ? r + step : tail; // runSeq(hi) > seq, or hi = tail
  while (hi - r > 1) {
    const mid = r + ((hi - r) >>> 1);
    if (runSeq[mid & rm] <= seq) r = mid;
    else hi = mid;
  }
  return r;
}

function nextPow2(n: number): number {
  let r = MIN_RING;
  while (r < n) r *= 2;
  return r;
}

class JsTracker implements EngineTracker {
  readonly #base: number;
  #head = 0; // seq of the oldest retained record
  #issued = 0; // seq the next registered record gets
  #blocked = 0; // completed records in [head, issued)
  // Kept in step with head/issued for the per-call path: a handle's distance from the
  // head's handle is exact and below 2^30 for every handle that can be accepted.
  #lo: number; // handle of the head record: base + head
  #len = 0; // retained entries: issued - head
  #hp = 0; // ring position of the head: head & mask
  #next: number; // the last batch's next position (or the start; -1 unknown)
  #firstOffset = -1; // first offset ever registered
  #lastOffset = -1; // last offset registered
  #mask = MIN_RING - 1;
  #bits = new Int32Array(MIN_RING >>> 5);
  #summary = new Int32Array(1);
  #runSeq = new Float64Array(MIN_RUNS);
  #runOff = new Float64Array(MIN_RUNS);
  #runMask = MIN_RUNS - 1;
  #runHead = 0; // absolute index of the run holding head (or the last run)
  #runTail = 0; // number of runs ever opened

  constructor(base: number, start: number, _capacity: number) {
    this.#base = base;
    this.#lo = base;
    this.#next = start;
  }

  register(offsets: Float64Array, count: number, next: number): number {
    const first = this.#base + this.#issued;
    if (count > 0) {
      this.#ensureRing(this.#issued - this.#head + count);
      this.#clear(this.#issued, count);
      const last = offsets[count - 1];
      if (last - offsets[0] === count - 1) {
        // One dense stretch (the façade checked: strictly increasing integers).
        if (offsets[0] !== this.#lastOffset + 1 || this.#runTail === 0) this.#openRun(this.#issued, offsets[0]);
      } else {
        let prev = this.#lastOffset;
        for (let i = 0; i < count; i++) {
          const o = offsets[i];
          if (o !== prev + 1 || this.#runTail === 0) this.#openRun(this.#issued + i, o);
          prev = o;
        }
      }
      if (this.#firstOffset < 0) this.#firstOffset = offsets[0];
      this.#lastOffset = last;
      this.#issued += count;
      this.#len += count;
      this.#skipRetiredRuns(); // head may sit exactly where a new run opened
    }
    this.#next = next;
    return first;
  }

  registerPlain(offsets: Float64Array, count: number, next: number): number {
    return plainBatch(offsets, count, this.#next) ? this.register(offsets, count, next) : -1;
  }

  complete(handle: number): Completion {
    const d = handle - this.#lo;
    const u = d | 0; // u === d ⟺ d is an integer in int32 (NaN and fractions fail)
    if (u !== d || u < 0 || u >= this.#len) return this.#outside(handle);
    const p = (this.#hp + u) & this.#mask;
    const w = p >>> 5;
    const bit = 1 << (p & 31);
    const x = this.#bits[w];
    if ((x & bit) !== 0) return Completion.Duplicate;
    const y = x | bit;
    this.#bits[w] = y;
    this.#blocked++;
    if (y === -1) this.#summary[w >>> 5] |= 1 << (w & 31);
    if (u !== 0) return Completion.Completed;
    this.#headCompleted(p);
    return Completion.Advanced;
  }

  /** A handle outside the retained records: `Duplicate` for one behind the head, else `Rejected`. */
  #outside(handle: number): Completion {
    const seq = handle - this.#base;
    return seq >= 0 && seq < this.#head && Number.isInteger(seq) ? Completion.Duplicate : Completion.Rejected;
  }

  completeMany(handles: Float64Array, count: number): number {
    const lo = this.#lo, len = this.#len, hp = this.#hp, mask = this.#mask;
    const bits = this.#bits, summary = this.#summary;
    let added = 0;
    let atHead = false;
    for (let i = 0; i < count; i++) {
      const d = handles[i] - lo;
      const u = d | 0;
      if (u !== d || u < 0 || u >= len) continue;
      const p = (hp + u) & mask;
      const w = p >>> 5;
      const bit = 1 << (p & 31);
      const x = bits[w];
      if ((x & bit) !== 0) continue;
      const y = x | bit;
      bits[w] = y;
      added++;
      if (y === -1) summary[w >>> 5] |= 1 << (w & 31);
      if (u === 0) atHead = true;
    }
    this.#blocked += added;
    if (atHead) this.#advance();
    return added;
  }

  completeOffset(offset: number): Completion {
    const safe = this.safe();
    if (offset < safe) {
      return this.#firstOffset >= 0 && offset >= this.#firstOffset ? Completion.Duplicate : Completion.Rejected;
    }
    if (this.#head >= this.#issued) return Completion.Rejected;
    const runSeq = this.#runSeq, runOff = this.#runOff, rm = this.#runMask;
    // Newest run first (dense offsets: one run), else a search over the runs held.
    let r = (this.#runTail - 1) & rm;
    let end = this.#issued;
    if (offset < runOff[r]) {
      const found = this.#findRun(offset, this.#runHead, this.#runTail - 2);
      r = found & rm;
      end = runSeq[(found + 1) & rm];
    }
    const seq = runSeq[r] + (offset - runOff[r]);
    return seq < end ? this.complete(this.#base + seq) : Completion.Rejected;
  }

  /**
   * The last run starting at or before `offset` among runs [lo, hi] (absolute indices),
   * given runOff(lo) ≤ offset. A few interpolation steps first (offsets grow about evenly
   * over runs in real topics, so they land next to the answer), then bisection. Every
   * probe lies in (lo, hi], so each step narrows the range.
   */
  #findRun(offset: number, lo: number, hi: number): number {
    const runOff = this.#runOff, rm = this.#runMask;
    for (let k = 0; lo < hi; k++) {
      let probe: number;
      if (k < 4) {
        const a = runOff[lo & rm], b = runOff[hi & rm];
        if (offset >= b) return hi;
        probe = lo + 1 + Math.floor(((offset - a) / (b - a)) * (hi - lo - 1)); // in [lo + 1, hi]
      } else {
        probe = lo + Math.ceil((hi - lo) / 2);
      }
      if (runOff[probe & rm] <= offset) lo = probe;
      else hi = probe - 1;
    }
    return lo;
  }

  safe(): number {
    if (this.#head >= this.#issued) return this.#next;
    const r = this.#runHead & this.#runMask;
    return this.#runOff[r] + (this.#head - this.#runSeq[r]);
  }

  delivered(): number {
    return this.#next;
  }

  retained(): number {
    return this.#issued - this.#head;
  }

  blocked(): number {
    return this.#blocked;
  }

  headHandle(): number {
    return this.#base + this.#head;
  }

  unfinishedRuns(out: Float64Array, maxRuns: number): number {
    const end = this.#issued, mask = this.#mask, bits = this.#bits, summary = this.#summary;
    const runSeq = this.#runSeq, runOff = this.#runOff, rm = this.#runMask, tail = this.#runTail;
    let left = end - this.#head - this.#blocked; // pending records not yet in a pair: 0 ends the scan early
    let r = this.#runHead; // invariant: runSeq(r) ≤ pos whenever pos is pending
    let pos = this.#head;
    let n = 0;
    while (n < maxRuns && left > 0) {
      pos = nextPending(bits, summary, mask, pos, end);
      if (pos >= end) break; // not reached while `left` is exact
      const stop = nextCompleted(bits, mask, pos + 1, end); // [pos, stop): pending seqs
      r = runAtSeq(runSeq, rm, r, tail, pos);
      // Split [pos, stop) at the run boundaries inside it: runs start only at offset gaps.
      for (;;) {
        const runEnd = r + 1 < tail ? runSeq[(r + 1) & rm] : end;
        const e = stop < runEnd ? stop : runEnd;
        const ri = r & rm;
        out[2 * n] = runOff[ri] + (pos - runSeq[ri]);
        out[2 * n + 1] = e - pos;
        left -= e - pos;
        n++;
        pos = e;
        if (pos >= stop || n >= maxRuns) break;
        r++;
      }
    }
    return n;
  }

  bytes(): number {
    return this.#bits.byteLength + this.#summary.byteLength + this.#runSeq.byteLength + this.#runOff.byteLength;
  }

  release(): void {
    this.#bits = new Int32Array(0);
    this.#summary = new Int32Array(0);
    this.#runSeq = new Float64Array(0);
    this.#runOff = new Float64Array(0);
    this.#head = this.#issued;
    this.#lo = this.#base + this.#head;
    this.#len = 0;
  }

  /**
   * The head's record (ring position `p`) completed. Usually (completion in order) the
   * next record is unfinished and the head moves by exactly one; otherwise the general
   * advance. Kept out of complete(): inlined there it slows every other completion.
   */
  #headCompleted(p: number): void {
    const q = (p + 1) & this.#mask;
    if (this.#len > 1 && (this.#bits[q >>> 5] & (1 << (q & 31))) === 0) this.#moveHead(this.#head + 1);
    else this.#advance();
  }

  /** Moves head past the completed prefix: words of 32, summary words of 1,024, ctz at the first gap. */
  #advance(): void {
    const end = this.#issued, mask = this.#mask, bits = this.#bits, summary = this.#summary;
    let pos = this.#head;
    while (pos < end) {
      const p = pos & mask;
      if ((p & 1023) === 0 && summary[p >>> 10] === -1) {
        pos += 1024;
        continue;
      }
      const w = p >>> 5;
      const off = p & 31;
      const zeros = ~bits[w] & (-1 << off);
      if (zeros === 0) {
        pos += 32 - off;
        continue;
      }
      pos += ctz(zeros) - off;
      break;
    }
    this.#moveHead(pos > end ? end : pos);
  }

  /** Moves head to `pos` past completed records only, keeping lo/len/hp and the run pointer in step. */
  #moveHead(pos: number): void {
    this.#blocked -= pos - this.#head;
    this.#head = pos;
    this.#lo = this.#base + pos;
    this.#len = this.#issued - pos;
    this.#hp = pos & this.#mask;
    this.#skipRetiredRuns();
  }

  /** Invariant: runHead is the last run starting at or before head. */
  #skipRetiredRuns(): void {
    const runSeq = this.#runSeq, rm = this.#runMask, head = this.#head;
    while (this.#runHead + 1 < this.#runTail && runSeq[(this.#runHead + 1) & rm] <= head) this.#runHead++;
  }

  #openRun(seq: number, offset: number): void {
    if (this.#runTail - this.#runHead > this.#runMask) this.#growRuns();
    const r = this.#runTail & this.#runMask;
    this.#runSeq[r] = seq;
    this.#runOff[r] = offset;
    this.#runTail++;
  }

  #growRuns(): void {
    const size = (this.#runMask + 1) * 2;
    const seqs = new Float64Array(size), offs = new Float64Array(size);
    for (let i = this.#runHead; i < this.#runTail; i++) {
      seqs[i & (size - 1)] = this.#runSeq[i & this.#runMask];
      offs[i & (size - 1)] = this.#runOff[i & this.#runMask];
    }
    this.#runSeq = seqs;
    this.#runOff = offs;
    this.#runMask = size - 1;
  }

  /** Clears the bits (and summary bits) of seqs [from, from + count), count ≤ ring size. */
  #clear(from: number, count: number): void {
    const size = this.#mask + 1;
    const p = from & this.#mask;
    const first = Math.min(count, size - p);
    this.#clearPositions(p, p + first);
    if (first < count) this.#clearPositions(0, count - first);
  }

  #clearPositions(a: number, b: number): void {
    const bits = this.#bits, summary = this.#summary;
    const wa = a >>> 5, wb = (b - 1) >>> 5;
    const headMask = -1 << (a & 31);
    const tailMask = -1 >>> (31 - ((b - 1) & 31));
    if (wa === wb) {
      bits[wa] &= ~(headMask & tailMask);
    } else {
      bits[wa] &= ~headMask;
      bits.fill(0, wa + 1, wb);
      bits[wb] &= ~tailMask;
    }
    for (let w = wa; w <= wb; w++) summary[w >>> 5] &= ~(1 << (w & 31));
  }

  /** Grows the ring to hold `needed` entries, re-laying the retained bits. */
  #ensureRing(needed: number): void {
    if (needed <= this.#mask + 1) return;
    const size = nextPow2(needed), newMask = size - 1;
    const bits = new Int32Array(size >>> 5);
    const old = this.#bits, oldMask = this.#mask, end = this.#issued;
    for (let s = this.#head; s < end;) {
      const p = s & oldMask;
      const off = p & 31;
      const span = Math.min(32 - off, end - s);
      let x = (old[p >>> 5] >>> off) & (span === 32 ? -1 : (1 << span) - 1);
      while (x !== 0) {
        const q = (s + ctz(x)) & newMask;
        bits[q >>> 5] |= 1 << (q & 31);
        x &= x - 1;
      }
      s += span;
    }
    const summary = new Int32Array(Math.max(1, size >>> 10));
    for (let w = 0; w < bits.length; w++) if (bits[w] === -1) summary[w >>> 5] |= 1 << (w & 31);
    this.#bits = bits;
    this.#summary = summary;
    this.#mask = newMask;
    this.#hp = this.#head & newMask;
  }
}
