/**
 * The WASM engine binding: the AssemblyScript hot path (assembly/engine.ts) behind the
 * {@link Engine} interface, answering every call exactly as the JS engine does.
 *
 * Initialisation: importing this module (`mod.ts` does) only registers a loader with
 * the engine selection; nothing is compiled yet. The first tracker that asks for
 * `engine: "auto"` (the default) or `"wasm"` compiles and instantiates the inlined
 * module synchronously (`new WebAssembly.Module` + `new WebAssembly.Instance`; a few
 * KiB, well under a millisecond), which is fine on Node, Bun and Deno. Callers that
 * prefer an asynchronous compile (e.g. a browser main thread, where synchronous compiles
 * of more than 4 KiB are refused) `await ready()` before creating trackers. Where
 * WebAssembly is missing or refuses the module (it uses 128-bit SIMD, which Node ≥ 16.4,
 * Deno, Bun and current browsers support), `"auto"` falls back to the JS engine and
 * `"wasm"` throws {@link EngineUnavailableError}.
 *
 * One module instance serves every tracker: each tracker is a small struct in linear
 * memory (a few hundred bytes to start, grown by doubling only as its retained entries
 * need, in place where it can), freed on `revoke()` (or when a tracker that was never
 * revoked is garbage collected) and reused by later trackers. The memory starts at 1 MiB
 * and the module's own allocator (assembly/alloc.ts) grows it by exactly the pages a
 * block lacks: growth detaches the views the per-call path uses, and growth while that
 * path is being compiled leaves it slower on every runtime, so small working sets never
 * grow the memory. Handles and offsets cross the boundary as numbers, never BigInt. A
 * batch is copied into linear memory with one `set`, then checked (a plain Float64Array
 * batch) and applied in one call (batches longer than 65,536 in chunks of that size,
 * which gives the same result).
 *
 * Per-call completion runs partly in JS. A call into WASM costs a few nanoseconds on
 * every runtime (≈ 4 ns on Node 20), about as much as the whole bit update, so
 * `complete(handle)` sets the record's bit from JS, over a typed-array view of the
 * engine's linear memory, and calls no WASM for a record behind the head: one already
 * complete is `Duplicate`; any other, unless its 64-bit bitmap word becomes all ones,
 * gets its bit set and is counted blocked, exactly what the WASM `complete` does for it.
 * Everything else goes to the WASM `complete` before anything is touched: the head's
 * record (the prefix advance, with i64 ctz and the summary level), the completion that
 * fills a word (its summary bit), and every handle outside the retained records
 * (Duplicate/Rejected). So completion out of order mostly stays in JS, while completion
 * in order (each record is the head) still makes one WASM call per record. The storage
 * stays in linear memory; registration, growth, batch and by-offset completion run in
 * WASM ({@link wasmCallEngine} is the engine without this fast path, for comparison).
 *
 * The struct fields the fast path needs (the head's handle and ring position, the
 * retained count, the ring's mask and address) are copied into the JS object and re-read
 * after every WASM call of this tracker that can change them: registration, and any call
 * that advanced the head (a per-call completion that advanced marks them stale instead,
 * so completion in order does not re-read them on every call). The struct in linear memory
 * stays the source of truth, and only this tracker's own calls change it. Growing the
 * memory (registration, opening a tracker, the batch scratch area) detaches every view of
 * it; a detached view has length 0, which sends the call down the WASM path, after which
 * the tracker takes a fresh view. A stale view therefore never reads or writes anything;
 * it costs one WASM call per tracker after the memory grew.
 *
 * @module
 */
import type { Engine, EngineTracker } from "./engine.ts";
import { provideWasmEngine } from "./engines.ts";
import { EngineUnavailableError } from "../errors.ts";
import { wasmBytes } from "./wasm_bytes.ts";
import { bindWasm, type Exports, viewsAfterGrowth, WasmCallTracker, WasmTracker } from "./wasm_tracker.ts";

let exports: Exports | undefined;
let engine: Engine | undefined;
let callEngine: Engine | undefined;

function instantiate(instance: WebAssembly.Instance): Engine {
  if (engine) return engine;
  const x = instance.exports as unknown as Exports;
  exports = x;
  const registry = typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry<number>((t) => x.release(t)) // a tracker dropped without revoke() frees its memory
    : undefined;
  bindWasm(x, registry);
  const opener = (Kind: typeof WasmTracker) => (base: number, start: number, _capacity: number): EngineTracker => {
    const t = x.open(base, start);
    viewsAfterGrowth(x); // the struct and its first ring may have grown the memory
    const tracker = new Kind(x, t);
    registry?.register(tracker, t, tracker);
    return tracker;
  };
  engine = { kind: "wasm", open: opener(WasmTracker) };
  callEngine = { kind: "wasm", open: opener(WasmCallTracker) };
  return engine;
}

function unavailable(): string | undefined {
  const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (typeof wasm !== "object" || wasm === null || typeof wasm.Module !== "function") {
    return "WebAssembly is not available in this runtime";
  }
  return undefined;
}

/**
 * Returns the WASM engine, compiling and instantiating the inlined module synchronously
 * on first use (then cached). This is the loader `engine: "auto"` and `"wasm"` use.
 * @throws {EngineUnavailableError} where WebAssembly is missing or refuses the module
 */
export function loadWasmEngine(): Engine {
  if (engine) return engine;
  const why = unavailable();
  if (why) throw new EngineUnavailableError(why);
  try {
    return instantiate(new WebAssembly.Instance(new WebAssembly.Module(wasmBytes()), {}));
  } catch (error) {
    throw new EngineUnavailableError(`the WASM module cannot load: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Compiles and instantiates the WASM engine asynchronously (`WebAssembly.compile`), for
 * callers that prefer not to compile synchronously on first use. Optional on Node, Bun
 * and Deno; idempotent. Afterwards `engine: "auto"` uses WASM.
 *
 * @example
 * ```ts
 * import { ready, Tracker } from "offset-frontier/tracker";
 * await ready();
 * new Tracker({ start: 0 }).engine; // "wasm"
 * ```
 * @throws {EngineUnavailableError} (rejects) where WebAssembly is missing or refuses the module;
 *   `engine: "auto"` then keeps using the JS engine
 */
export async function ready(): Promise<void> {
  if (engine) return;
  const why = unavailable();
  if (why) throw new EngineUnavailableError(why);
  try {
    const module = await WebAssembly.compile(wasmBytes());
    instantiate(await WebAssembly.instantiate(module, {}));
  } catch (error) {
    throw new EngineUnavailableError(`the WASM module cannot load: ${error instanceof Error ? error.message : String(error)}`);
  }
  provideWasmEngine(loadWasmEngine); // forgets an earlier failed synchronous attempt
}

/**
 * The WASM engine without the per-call fast path: every `complete(handle)` is one WASM
 * call, as before the fast path. Same storage, same answers; for benchmarks and tests
 * that compare the two (not exported from `mod.ts`). Pass it as `engine` to a Tracker.
 * @throws {EngineUnavailableError} where WebAssembly is missing or refuses the module
 */
export function wasmCallEngine(): Engine {
  loadWasmEngine();
  return callEngine!;
}

/**
 * A copy of a WASM engine tracker's ring block (bitmap words, then summary words), for
 * tests that check the per-call fast path leaves linear memory exactly as the WASM path
 * does (summary bits included, which no answer reveals). Empty for other trackers.
 */
export function wasmRingBytes(store: EngineTracker): Uint8Array {
  if (!(store instanceof WasmTracker) || !exports) return new Uint8Array(0);
  return store.ring(exports);
}

/**
 * Byte address of a WASM engine tracker's ring block in linear memory (-1 for other
 * trackers), for tests that check the ring grew in place (its address stayed).
 */
export function wasmRingAddress(store: EngineTracker): number {
  if (!(store instanceof WasmTracker) || !exports) return -1;
  return store.ringAddress(exports);
}

/**
 * Size of the WASM engine's linear memory in bytes (0 before it is loaded): 1 MiB at
 * first, then it only grows; trackers reuse the memory that revoked trackers freed. For
 * tests and monitoring.
 */
export function wasmMemoryBytes(): number {
  return exports ? exports.memory.buffer.byteLength : 0;
}

/**
 * Bytes of the WASM engine's linear memory its allocator has used (0 before it is
 * loaded): the end of the highest block ever handed out. It only grows. The memory
 * starts with a 1 MiB reserve, so this, not {@link wasmMemoryBytes}, is what the
 * engine's storage has needed. For tests and monitoring.
 */
export function wasmMemoryUsedBytes(): number {
  return exports ? exports.memoryUsed() : 0;
}

provideWasmEngine(loadWasmEngine);
