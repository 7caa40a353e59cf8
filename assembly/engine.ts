/**
 * The WASM engine: the AssemblyScript hot path behind the same engine interface as
 * core/tracker/js_engine.ts, answering every call exactly as it does (core/tracker/wasm_engine.ts is
 * the binding; test/unit/wasm_differential.test.ts proves the agreement).
 *
 * One module instance serves every tracker. A tracker is a small struct in linear
 * memory (its field offsets: assembly/layout.ts) pointing at two blocks, all from the
 * allocator in assembly/alloc.ts (freed blocks are reused; the memory starts at 1 MiB
 * and grows by exactly the pages a block lacks; the AS runtime is the `stub` one, and
 * nothing calls its heap):
 * - the ring: `bits` (one completed bit per retained record at ring position
 *   `seq & mask`, 64-bit words) followed by `summary` (one bit per bitmap word; set ⟹
 *   that word is all ones, so the prefix advance skips 64 records per word and up to
 *   4,096 per summary word). Bits of seqs in [head, issued) are exact; others are
 *   stale and cleared when their position is issued again. Starts at 512 bits and
 *   doubles only when the retained entries need it, in place when the block can be
 *   extended (a large ring at the top of the memory or before free memory), else into a
 *   new block.
 * - the runs: (first seq, first offset) pairs, a ring of runs; a new run starts only at
 *   a gap in the offsets, so dense offsets cost nothing per record.
 *
 * Offsets and handles cross the boundary as f64 (integers below 2^53); inside they are
 * i64. Nothing here allocates managed objects.
 */

// The exports, in the module's order (core/tracker/wasm_engine.ts lists them); each file
// holds one part: the struct layout and shared sizes (layout.ts), the ring's bitmap
// (ring.ts), the runs (runs.ts), and the parts below.
export { open, release, bytes, memoryUsed, scratch, register, registerPlain } from "./lifecycle";
export { complete, completeMany, completeOffset } from "./completion";
export { unfinishedRuns, unfinishedResume } from "./unfinished";
export { safe, delivered, retained, blocked, headHandle } from "./positions";
