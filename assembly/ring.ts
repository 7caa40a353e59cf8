/**
 * The ring's bitmap and summary: growth by doubling (in place when the allocator can
 * extend the block) with the bits re-laid, and the clearing of positions issued again.
 */

import { alloc, free, grow } from "./alloc";
import { BITS, HEAD, ISSUED, MASK, ONES, ringBytes, ringWords, summaryWords } from "./layout";

/**
 * Grows the ring (by doubling) to hold `needed` entries: extends its block in place if
 * the allocator can, else moves the bitmap to a new block; then re-lays the bits there.
 */
export function ensureRing(t: usize, needed: i64): void {
  const mask = load<u32>(t, MASK);
  if (needed <= <i64>mask + 1) return;
  let size: i64 = <i64>mask + 1;
  while (size < needed) size <<= 1;
  const newMask = <u32>(size - 1);
  const oldBytes = ringBytes(mask);
  const newBytes = ringBytes(newMask);
  let bits = load<usize>(t, BITS);
  if (!grow(bits, oldBytes, newBytes)) {
    const nb = alloc(newBytes);
    memory.copy(nb, bits, <usize>ringWords(mask) << 3); // the bitmap; the summary is rebuilt
    free(bits, oldBytes);
    bits = nb;
  }
  relay(bits, mask, newMask, load<i64>(t, HEAD), load<i64>(t, ISSUED));
  store<usize>(t, bits, BITS);
  store<u32>(t, newMask, MASK);
}

/**
 * Turns the bitmap of a ring of `mask + 1` bits at the start of the block `bits` into the
 * ring block of `newMask + 1` bits, in place; whatever else the block holds is
 * overwritten. Retained seq s ∈ [head, end) (at most mask + 1 of them) moves from
 * position `s & mask` to `s & newMask`. Split at the multiples of the old size, the
 * range is at most two segments, each within the old bitmap and moving up by a multiple
 * of the old size (≥ 512 bits): whole words, to places that neither overlaps its own
 * source nor the other segment's source or destination. Every other bit is then cleared
 * and the summary rebuilt, so the block ends the same as a copy into zeroed memory would.
 */
function relay(bits: usize, mask: u32, newMask: u32, head: i64, end: i64): void {
  for (let s = head; s < end;) {
    const p = <u32>s & mask;
    let e = s + (<i64>mask + 1 - <i64>p); // the next multiple of the old size
    if (e > end) e = end;
    const q = <u32>s & newMask;
    if (q != p) {
      const w = p >> 6;
      const words = ((p + <u32>(e - s) - 1) >> 6) + 1 - w;
      memory.copy(bits + (<usize>(q >> 6) << 3), bits + (<usize>w << 3), <usize>words << 3);
    }
    s = e;
  }
  // Clear the positions outside [head, end): the circular range from end's position on.
  const n = newMask + 1;
  const len = n - <u32>(end - head);
  const a = <u32>end & newMask;
  const first = len < n - a ? len : n - a;
  clearBits(bits, a, a + first);
  if (first < len) clearBits(bits, 0, len - first);
  const words = ringWords(newMask);
  const summary = bits + (<usize>words << 3);
  memory.fill(summary, 0, <usize>summaryWords(newMask) << 3);
  for (let w: u32 = 0; w < words; w++) {
    if (load<u64>(bits + (<usize>w << 3)) == ONES) {
      const at = summary + (<usize>(w >> 6) << 3);
      store<u64>(at, load<u64>(at) | (<u64>1 << (w & 63)));
    }
  }
}

/** Clears the bits (and summary bits) of seqs [from, from + count), count ≤ ring size. */
export function clearSeqs(t: usize, from: i64, count: u32): void {
  const mask = load<u32>(t, MASK);
  const bits = load<usize>(t, BITS);
  const summary = bits + (<usize>ringWords(mask) << 3);
  const p = <u32>from & mask;
  const room = mask + 1 - p;
  const first = count < room ? count : room;
  clearPositions(bits, summary, p, p + first);
  if (first < count) clearPositions(bits, summary, 0, count - first);
}

/** Clears ring positions [a, b) and the summary bits of the words they touch. */
// @ts-ignore: decorator
@inline function clearPositions(bits: usize, summary: usize, a: u32, b: u32): void {
  clearBits(bits, a, b);
  clearBits(summary, a >> 6, ((b - 1) >> 6) + 1);
}

/** Clears bits [a, b) of the u64 words at `ptr` (a < b). */
function clearBits(ptr: usize, a: u32, b: u32): void {
  const wa = a >> 6;
  const wb = (b - 1) >> 6;
  const headMask = ONES << (a & 63);
  const tailMask = ONES >> (63 - ((b - 1) & 63));
  const pa = ptr + (<usize>wa << 3);
  if (wa == wb) {
    store<u64>(pa, load<u64>(pa) & ~(headMask & tailMask));
  } else {
    store<u64>(pa, load<u64>(pa) & ~headMask);
    if (wb > wa + 1) memory.fill(pa + 8, 0, <usize>(wb - wa - 1) << 3);
    const pb = ptr + (<usize>wb << 3);
    store<u64>(pb, load<u64>(pb) & ~tailMask);
  }
}
