/**
 * One tracker of the WASM engine: a struct in the module's linear memory, with the
 * per-call completion fast path in JS over typed-array views of that memory (see
 * wasm_engine.ts for the design), and the views and the batch scratch area all trackers
 * share. wasm_engine.ts loads the module and binds it here ({@link bindWasm}).
 *
 * @module
 */
import type { Completion, EngineTracker } from "./engine.ts";
import { plainBatch } from "./plain_batch.ts";

/** The module's exports (assembly/engine.ts); tracker pointers are byte addresses in `memory`. */
export interface Exports {
  readonly memory: WebAssembly.Memory;
  open(base: number, start: number): number;
  release(t: number): void;
  bytes(t: number): number;
  scratch(n: number): number;
  register(t: number, src: number, count: number, next: number): number;
  registerPlain(t: number, src: number, count: number, next: number): number;
  complete(t: number, handle: number): number;
  completeMany(t: number, src: number, count: number): number;
  completeOffset(t: number, offset: number): number;
  safe(t: number): number;
  delivered(t: number): number;
  retained(t: number): number;
  blocked(t: number): number;
  headHandle(t: number): number;
  unfinishedRuns(t: number, dst: number, maxRuns: number, from: number): number;
  unfinishedResume(): number;
  memoryUsed(): number;
}

/** Batches longer than this are applied in chunks: registering or completing a batch in parts gives the same result. */
const CHUNK = 65_536;

// Tracker struct fields the JS fast path copies (#sync), as Int32Array indices relative to
// `t >>> 2` (byte offsets in assembly/layout.ts: LO 0 (f64), LEN 8, MASK 12, BITS 16,
// BLOCKED 20, HEAD 24 (the low word of an i64)). Structs and ring blocks come from the
// engine's allocator (assembly/alloc.ts), which aligns every block to 16 bytes: `t >>> 3`
// indexes LO in a Float64Array, and a 64-bit bitmap word is the two Int32Array slots `2w`
// (low half, little endian) and `2w + 1` of the ring block.
const LEN = 2, MASK = 3, BITS = 4, BLOCKED = 5, HEAD = 6;

let dead = 0; // an empty tracker that released trackers point at: accepts nothing
// Views of linear memory; re-made after memory grew (a detached view has length 0). Typed
// over ArrayBufferLike: `WebAssembly.Memory.buffer` is `ArrayBuffer | SharedArrayBuffer` in some lib.d.ts.
let f64: Float64Array<ArrayBufferLike> = new Float64Array(0);
let i32: Int32Array<ArrayBufferLike> = new Int32Array(0);
let scratchAt = 0; // byte address of the scratch area
let scratchLen = 0; // its size in f64 slots
let wasmComplete: (t: number, handle: number) => number = () => 0;
let finalizer: FinalizationRegistry<number> | undefined;

/**
 * Binds the trackers to the module's instance, once: the struct every released tracker
 * points at, the per-call completion, the finalizer of trackers dropped without
 * `revoke()`, and the first views of its memory.
 */
export function bindWasm(x: Exports, registry: FinalizationRegistry<number> | undefined): void {
  dead = x.open(0, -1);
  wasmComplete = x.complete;
  finalizer = registry;
  refreshViews(x);
}

/** Makes the memory views current after a call that may have grown the memory. */
export function viewsAfterGrowth(x: Exports): void {
  refreshViews(x);
}

/** Re-makes the memory views if the memory grew since they were made (growth detaches the old buffer). */
function refreshViews(x: Exports): void {
  if (i32.length === 0) { // both views share one buffer
    const buffer = x.memory.buffer;
    f64 = new Float64Array(buffer);
    i32 = new Int32Array(buffer);
  }
}

/**
 * Makes the scratch area hold at least `n` ≤ CHUNK f64 slots and the views current;
 * returns its byte address. Growing it may grow the memory, which detaches every view.
 */
function reserve(x: Exports, n: number): number {
  if (n > scratchLen) {
    scratchLen = Math.min(CHUNK, Math.max(n, scratchLen * 2, 1024));
    scratchAt = x.scratch(scratchLen);
  }
  refreshViews(x); // new, or detached: memory grew
  return scratchAt;
}

/** Copies `src[from, from + n)` into the scratch area (one `set`) and returns its byte address. */
function stage(x: Exports, src: Float64Array, from: number, n: number): number {
  const at = reserve(x, n) >>> 3;
  if (n <= 32) {
    for (let i = 0; i < n; i++) f64[at + i] = src[from + i];
  } else {
    f64.set(from === 0 && n === src.length ? src : src.subarray(from, from + n), at);
  }
  return scratchAt;
}

/** One partition assignment's storage in the module's linear memory, with the JS fast path of `complete(handle)`. */
export class WasmTracker implements EngineTracker {
  /** Byte address of the struct (`dead` once released). */
  protected t: number;
  protected readonly x: Exports;
  // Copies of the struct fields the fast path reads. Only this tracker's own WASM calls
  // change them (register, and the prefix advance in complete/completeMany/completeOffset),
  // and they are re-read after each of those (#sync, #advanced; after an advance in
  // complete(), on the next call that does not advance). The struct in linear memory
  // stays the source of truth; the copies save loads and bounds checks on every call.
  #lo = 0; // LO: handle of the head record
  #len = 0; // LEN: retained entries; 0 also when released, and while LO/LEN/HEAD are stale
  #head = 0; // the low word of HEAD
  #mask = 0; // MASK
  #bits = 0; // BITS / 4: the ring block's first slot in #i32
  #blocked = 0; // the BLOCKED field's slot in #i32
  // This tracker's view of the memory (a field of `this` is cheaper to reach than a
  // module variable). Growth of the memory, by any tracker, detaches it: its length is
  // then 0, the call takes the WASM path, and #sync() takes a fresh view.
  #i32: Int32Array<ArrayBufferLike> = i32;
  #f64: Float64Array<ArrayBufferLike> = f64;
  #at = 0; // t >>> 2: the struct's first slot in #i32

  constructor(x: Exports, t: number) {
    this.x = x;
    this.t = t;
    this.#sync();
  }

  /** Re-makes the views if the memory grew, takes them, and re-reads the struct. */
  #sync(): void {
    refreshViews(this.x);
    const m = i32, i = this.t >>> 2;
    this.#i32 = m;
    this.#f64 = f64;
    this.#at = i;
    this.#lo = f64[i >>> 1];
    this.#len = m[i + LEN];
    this.#head = m[i + HEAD];
    this.#mask = m[i + MASK];
    this.#bits = m[i + BITS] >>> 2;
    this.#blocked = i + BLOCKED;
  }

  /** After the prefix advance in WASM: re-reads LO, LEN and HEAD (everything if the view was detached). */
  #advanced(): void {
    const m = this.#i32, i = this.#at;
    if (m.length === 0) return this.#sync();
    this.#lo = this.#f64[i >>> 1];
    this.#len = m[i + LEN];
    this.#head = m[i + HEAD];
  }

  register(offsets: Float64Array, count: number, next: number): number {
    const x = this.x, t = this.t;
    if (t === dead) throw new Error("the tracker's storage was released");
    let first = 0;
    if (count <= CHUNK) {
      first = x.register(t, count === 0 ? 0 : stage(x, offsets, 0, count), count, next);
    } else {
      for (let i = 0; i < count; i += CHUNK) {
        const n = Math.min(CHUNK, count - i);
        const h = x.register(t, stage(x, offsets, i, n), n, next);
        if (i === 0) first = h;
      }
    }
    this.#sync(); // LEN moved; the ring (BITS, MASK) and the memory may have grown
    return first;
  }

  registerPlain(offsets: Float64Array, count: number, next: number): number {
    const x = this.x, t = this.t;
    if (t === dead) throw new Error("the tracker's storage was released");
    if (count > CHUNK) return plainBatch(offsets, count, x.delivered(t)) ? this.register(offsets, count, next) : -1;
    const first = x.registerPlain(t, stage(x, offsets, 0, count), count, next); // checked in WASM, two offsets per step
    if (first >= 0) this.#sync();
    return first;
  }

  /**
   * The fast path (see the module doc): a record behind the head whose bitmap word stays
   * incomplete is set from JS, exactly as the WASM `complete` would set it; anything else
   * is answered by the WASM `complete` before anything changes.
   */
  complete(handle: number): Completion {
    const d = handle - this.#lo;
    const u = d | 0;
    if (u === d && u > 0 && u < this.#len) {
      const m = this.#i32;
      const p = (this.#head + u) & this.#mask; // ring position of seq head + u
      const k = this.#bits + (p >>> 5); // its half of a 64-bit word
      if (k < m.length) { // else the view is detached (length 0): the memory grew
        const bit = 1 << (p & 31);
        const w = m[k];
        if ((w & bit) !== 0) return 1; // Duplicate
        const y = w | bit;
        if (y !== -1 || m[k ^ 1] !== -1) { // the 64-bit word stays incomplete: no summary bit
          m[k] = y;
          m[this.#blocked]++;
          return 2; // Completed
        }
      }
    }
    return this.#call(handle);
  }

  /**
   * complete() through WASM. Kept out of complete(), and without a branch on the answer
   * in the common case: JavaScriptCore leaves its optimized code (for the rest of the
   * caller's loop) whenever a block runs that its profiling never saw, and in random
   * order a completion that advances comes a few times per million calls.
   */
  #call(handle: number): Completion {
    if (this.#len === 0) {
      // Nothing retained, released, or the head moved on the last call (LO, LEN and HEAD
      // not re-read yet). Completion in order advances every time and stays here (the
      // WASM call and little else); a call that does not advance re-reads them.
      const r = wasmComplete(this.t, handle) as Completion;
      if (r !== 3) this.#advanced();
      return r;
    }
    const r = wasmComplete(this.t, handle) as Completion;
    this.#len &= ((r + 1) >> 2) - 1; // Advanced (3): LO, LEN and HEAD are stale, LEN becomes 0 (no branch)
    if (this.#i32.length === 0) this.#sync(); // the view was detached: take a fresh one
    return r;
  }

  completeMany(handles: Float64Array, count: number): number {
    const x = this.x, t = this.t;
    let added = 0;
    for (let i = 0; i < count; i += CHUNK) {
      const n = Math.min(CHUNK, count - i);
      added += x.completeMany(t, stage(x, handles, i, n), n);
    }
    this.#advanced(); // the head may have moved
    return added;
  }

  completeOffset(offset: number): Completion {
    const r = this.x.completeOffset(this.t, offset) as Completion;
    if (r === 3) this.#advanced(); // the head moved
    return r;
  }

  safe(): number {
    return this.x.safe(this.t);
  }

  delivered(): number {
    return this.x.delivered(this.t);
  }

  retained(): number {
    // The struct's LEN, read from JS: the backpressure check reads it after every completion
    // that advances while its lane is paused. A detached view (the memory grew) takes the call.
    const m = this.#i32;
    return m.length !== 0 ? m[this.#at + LEN] : this.x.retained(this.t);
  }

  blocked(): number {
    return this.x.blocked(this.t);
  }

  headHandle(): number {
    return this.x.headHandle(this.t);
  }

  /**
   * The scan runs in WASM, one call per CHUNK / 2 pairs (one call for any realistic
   * `maxRuns`), writing into the scratch area, which is then copied into `out`. Each pair
   * holds at least one pending record, so the scratch area never needs more than
   * 2 · pending slots (LEN and BLOCKED are u32 fields: their Int32Array slots read them
   * exactly, as both are below 2^31).
   */
  unfinishedRuns(out: Float64Array, maxRuns: number): number {
    const x = this.x, t = this.t;
    refreshViews(x);
    const i = t >>> 2;
    const want = Math.min(maxRuns, i32[i + LEN] - i32[i + BLOCKED]); // the pending records, read from the struct
    let n = 0;
    let from = -1; // from the head; then the seq where the last call stopped
    while (n < want) {
      const k = Math.min(want - n, CHUNK >>> 1);
      const at = reserve(x, 2 * k); // may grow the memory: views re-made before they are read
      const got = x.unfinishedRuns(t, at, k, from);
      const src = at >>> 3, m = 2 * got, view = f64;
      if (m <= 64) {
        for (let i = 0; i < m; i++) out[2 * n + i] = view[src + i];
      } else {
        out.set(view.subarray(src, src + m), 2 * n);
      }
      n += got;
      if (got < k) break; // nothing more pending
      from = x.unfinishedResume();
    }
    return n;
  }

  bytes(): number {
    return this.t === dead ? 0 : this.x.bytes(this.t);
  }

  /** See {@link wasmRingBytes}. */
  ring(x: Exports): Uint8Array {
    if (this.t === dead) return new Uint8Array(0);
    refreshViews(x);
    const i = this.t >>> 2, words = (i32[i + MASK] + 1) / 64;
    const at = i32[i + BITS] >>> 0;
    return new Uint8Array(x.memory.buffer, at, (words + Math.max(1, words >>> 6)) * 8).slice();
  }

  /** See {@link wasmRingAddress}. */
  ringAddress(x: Exports): number {
    if (this.t === dead) return -1;
    refreshViews(x);
    return i32[(this.t >>> 2) + BITS] >>> 0;
  }

  release(): void {
    const t = this.t;
    if (t === dead) return;
    this.t = dead;
    finalizer?.unregister(this);
    this.x.release(t);
    this.#sync(); // the empty struct: LEN 0, every call takes the WASM path and is rejected
  }
}

/** A tracker whose per-call completion (and `retained`) is one WASM call every time: the comparison for `wasmCallEngine` (wasm_engine.ts). */
export class WasmCallTracker extends WasmTracker {
  override complete(handle: number): Completion {
    return wasmComplete(this.t, handle) as Completion;
  }

  override retained(): number {
    return this.x.retained(this.t);
  }
}
