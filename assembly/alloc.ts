/**
 * The engine's allocator, in place of the AS runtime's heap (asconfig.json uses the
 * `stub` runtime, whose allocator nothing here calls). The AS heap (TLSF) doubles the
 * linear memory whenever it grows; this one grows it by exactly the pages a request
 * lacks, and can extend a block in place.
 *
 * Callers always know a block's size (the engine derives it from the tracker's fields)
 * and pass it back to free() and grow(), so blocks carry no header. Every block is
 * 16-byte aligned (core/tracker/wasm_engine.ts indexes structs as f64 and bitmap words as i32
 * pairs), and its contents are undefined until the caller writes them.
 *
 * - Small blocks (at most SMALL_MAX bytes): 12 size classes; class j holds `16 << j`
 *   bytes plus 1/64 of that (at least 16 bytes): 32, 48, 80, 144, 272, …, 16,640,
 *   33,280. A ring of 2^k bits (2^(k-3) bytes of bitmap, 2^(k-9) but at least 8 of
 *   summary) fits its class with at most 8 bytes to spare, and a power of two wastes 1/64,
 *   where power-of-two classes would waste almost half of every ring. A freed block goes
 *   on its class's free list (intrusive: its first word links to the next); new blocks
 *   are carved from the arena: the rest of the first page, then ARENA bytes at a time
 *   from the large blocks. Small blocks are never handed back to the large blocks.
 * - Large blocks: whole units of UNIT (4 KiB) bytes at multiples of UNIT (a ring just over
 *   a 64 KiB page would waste almost a page), from the free extents (first fit, carved
 *   from the extent's front); when none fits, the memory grows by the pages the request
 *   lacks beyond the last extent if that one ends at the top of the memory. What a growth
 *   adds beyond the request becomes a free extent. A large block followed by a free
 *   extent or by the top of the memory can grow in place (grow()).
 *
 * The memory starts at 16 pages (1 MiB, asconfig.json `initialMemory`): the first page
 * holds the static data and the first arena, the rest is a free extent from the start.
 * Growing the memory detaches every JS view of it (core/tracker/wasm_engine.ts); when that
 * happens while the JS per-call path is being compiled, the JITs of Node, Bun and Deno
 * leave that path slower for good, so a working set within the first MiB never grows it.
 * Untouched pages cost no physical memory; `used()` gives the high-water mark, which is
 * what the memory would have grown to without the reserve.
 *
 * `memory.grow` failing (out of memory) traps, as the AS runtime does.
 */

// @ts-ignore: decorator
@inline const CLASSES: u32 = 12;
// @ts-ignore: decorator
@inline const SMALL_MAX: usize = 33_280; // classSize(CLASSES - 1)
// @ts-ignore: decorator
@inline const UNIT: usize = 4096; // large blocks and free extents: multiples of UNIT at multiples of UNIT
// @ts-ignore: decorator
@inline const ARENA: usize = 65_536; // the arena's refill
// @ts-ignore: decorator
@inline const PAGE: usize = 65_536;

/** Bytes of a small block of class `j`. */
// @ts-ignore: decorator
@inline function classSize(j: u32): usize {
  const b = <usize>16 << j;
  return b + max<usize>(16, b >> 6);
}

/** The smallest class that holds `size` bytes (size ≤ SMALL_MAX). */
// @ts-ignore: decorator
@inline function classOf(size: usize): u32 {
  let j: u32 = size <= 16 ? 0 : 28 - <u32>clz<usize>(size - 1); // 16 << j ≥ size > 8 << j
  if (j > 0 && size <= classSize(j - 1)) j--; // fits the slack of the class below
  return j;
}

/** Bytes a block of `size` bytes actually holds: its class, or whole units. */
export function held(size: usize): usize {
  return size <= SMALL_MAX ? classSize(classOf(size)) : (size + UNIT - 1) & ~(UNIT - 1);
}

// ---------------------------------------------------------------- small blocks

// Class j's free list: the head at lists + 4j, each free block's first word the next (0 ends).
const lists: usize = memory.data(CLASSES << 2, 16);

// The arena [arenaPtr, arenaEnd): never handed out yet. Both multiples of 16.
let arenaPtr: usize = (__heap_base + 15) & ~15;
let arenaEnd: usize = min<usize>(<usize>memory.size() << 16, PAGE); // the rest of the first page

// The high-water mark: the end of the highest block ever handed out (arenas included).
let highWater: usize = arenaPtr;

// @ts-ignore: decorator
@inline function reach(end: usize): void {
  if (end > highWater) highWater = end;
}

function allocSmall(size: usize): usize {
  const j = classOf(size);
  const list = lists + (<usize>j << 2);
  const b = load<usize>(list);
  if (b != 0) {
    store<usize>(list, load<usize>(b));
    return b;
  }
  const bytes = classSize(j);
  if (arenaEnd - arenaPtr < bytes) refill();
  const p = arenaPtr;
  arenaPtr += bytes;
  reach(arenaPtr);
  return p;
}

// @ts-ignore: decorator
@inline function freeSmall(ptr: usize, j: u32): void {
  const list = lists + (<usize>j << 2);
  store<usize>(ptr, load<usize>(list));
  store<usize>(list, ptr);
}

/** Cuts the arena's rest into blocks for the free lists (largest class first), then takes a new arena. */
function refill(): void {
  let p = arenaPtr;
  for (let j = <i32>CLASSES - 1; j >= 0;) {
    const bytes = classSize(<u32>j);
    if (arenaEnd - p >= bytes) {
      freeSmall(p, <u32>j);
      p += bytes;
    } else {
      j--;
    }
  }
  arenaPtr = allocLarge(ARENA);
  arenaEnd = arenaPtr + ARENA;
}

// ---------------------------------------------------------------- large blocks

// Free extents: a list in address order, intrusive (an extent's first word links to the
// next, its second word is its size in bytes). Invariant: no two extents touch (freeing
// merges them), so an extent followed by a block or the top of the memory is maximal.
let extents: usize = 0;
if (top() > PAGE) freeLarge(PAGE, top() - PAGE); // the initial memory past the first page

// @ts-ignore: decorator
@inline function extentSize(e: usize): usize {
  return load<usize>(e, 4);
}

/** Links `e` after `prev` (0: as the first extent). */
// @ts-ignore: decorator
@inline function link(prev: usize, e: usize): void {
  if (prev == 0) extents = e;
  else store<usize>(prev, e);
}

/** The first byte past the memory. */
// @ts-ignore: decorator
@inline function top(): usize {
  return <usize>memory.size() << 16;
}

/** Returns [ptr, ptr + size) to the free extents, merging it with the extents it touches. */
function freeLarge(ptr: usize, size: usize): void {
  let prev: usize = 0;
  let e = extents;
  while (e != 0 && e < ptr) {
    prev = e;
    e = load<usize>(e);
  }
  let bytes = size;
  if (e == ptr + size) { // merge the extent that follows
    bytes += extentSize(e);
    e = load<usize>(e);
  }
  if (prev != 0 && prev + extentSize(prev) == ptr) { // merge into the extent before
    store<usize>(prev, e);
    store<usize>(prev, extentSize(prev) + bytes, 4);
  } else {
    store<usize>(ptr, e);
    store<usize>(ptr, bytes, 4);
    link(prev, ptr);
  }
}

/** Takes [at, at + size) off the front of the free extent that starts at `at` (and holds that much). */
function carve(at: usize, size: usize): void {
  let prev: usize = 0;
  let e = extents;
  while (e != at) {
    prev = e;
    e = load<usize>(e);
  }
  const next = load<usize>(e);
  const rest = extentSize(e) - size;
  if (rest == 0) {
    link(prev, next);
  } else {
    const r = at + size;
    store<usize>(r, next);
    store<usize>(r, rest, 4);
    link(prev, r);
  }
}

/** Grows the memory by the pages it lacks to end at or after `end` (> top), and frees the new pages. */
function growTo(end: usize): void {
  const old = top();
  const pages = (end - old + PAGE - 1) >> 16; // end - old: the bytes lacking, even if `end` wrapped past 2^32
  // Out of memory traps; the memory stays below 65,536 pages, so that top() fits a usize.
  if (pages > 65_535 - <usize>memory.size() || memory.grow(<i32>pages) < 0) unreachable();
  freeLarge(old, <usize>pages << 16); // merges with an extent that ends at the old top
}

/** A block of `size` bytes (a multiple of UNIT): the first extent that fits, else at the top after growing. */
function allocLarge(size: usize): usize {
  let last: usize = 0;
  for (let e = extents; e != 0; e = load<usize>(e)) {
    if (extentSize(e) >= size) {
      carve(e, size);
      reach(e + size);
      return e;
    }
    last = e;
  }
  // Nothing fits: the block starts at the last extent if that one ends at the top, else at the top.
  const at = last != 0 && last + extentSize(last) == top() ? last : top();
  growTo(at + size);
  carve(at, size);
  reach(at + size);
  return at;
}

/** Extends the large block [ptr, ptr + size) to `newSize` bytes in place if free memory follows it (growing the memory at the top). */
function growLarge(ptr: usize, size: usize, newSize: usize): bool {
  const end = ptr + size;
  let e = extents;
  while (e != 0 && e < end) e = load<usize>(e);
  const free = e == end ? extentSize(e) : 0; // the free extent right after the block
  if (free < newSize - size) {
    if (end + free != top()) return false;
    growTo(ptr + newSize);
  }
  carve(end, newSize - size);
  reach(ptr + newSize);
  return true;
}

// ---------------------------------------------------------------- interface

/** Bytes of linear memory up to the end of the highest block ever handed out. */
export function used(): usize {
  return highWater;
}

/** A block of at least `size` bytes (its contents undefined), 16-byte aligned. */
export function alloc(size: usize): usize {
  return size <= SMALL_MAX ? allocSmall(size) : allocLarge(held(size));
}

/** Frees the block at `ptr` that was allocated (or last grown) with `size` bytes. */
export function free(ptr: usize, size: usize): void {
  if (size <= SMALL_MAX) freeSmall(ptr, classOf(size));
  else freeLarge(ptr, held(size));
}

/**
 * Makes the block at `ptr` of `size` bytes hold `newSize` (> size) bytes at the same
 * address, keeping its contents, if it can: when it already does (same class or units),
 * or when a large block is followed by enough free memory or by the top of the memory
 * (which then grows by exactly the pages lacking). Returns false, changing nothing, if
 * it cannot; the caller then allocates a new block.
 */
export function grow(ptr: usize, size: usize, newSize: usize): bool {
  const have = held(size);
  if (held(newSize) <= have) return true;
  if (size <= SMALL_MAX) return false; // small blocks stay in their class
  return growLarge(ptr, have, held(newSize));
}
