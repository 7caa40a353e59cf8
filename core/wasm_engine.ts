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
 * need), freed on `revoke()` (or when a tracker that was never revoked is garbage
 * collected) and reused by later trackers. Handles and offsets cross the boundary as
 * numbers, never BigInt; `complete(handle)` is a single WASM call that allocates nothing;
 * a batch is copied into linear memory with one `set` and applied in one call (batches
 * longer than 65,536 in chunks of that size, which gives the same result).
 *
 * @module
 */
import type { Completion, Engine, EngineTracker } from "./engine.ts";
import { provideWasmEngine } from "./engines.ts";
import { EngineUnavailableError } from "./errors.ts";
import { wasmBytes } from "./wasm_bytes.ts";

/** The module's exports (assembly/engine.ts); tracker pointers are byte addresses in `memory`. */
interface Exports {
  readonly memory: WebAssembly.Memory;
  open(base: number, start: number): number;
  release(t: number): void;
  bytes(t: number): number;
  scratch(n: number): number;
  register(t: number, src: number, count: number, next: number): number;
  complete(t: number, handle: number): number;
  completeMany(t: number, src: number, count: number): number;
  completeOffset(t: number, offset: number): number;
  safe(t: number): number;
  delivered(t: number): number;
  retained(t: number): number;
  blocked(t: number): number;
  headHandle(t: number): number;
}

/** Batches longer than this are applied in chunks: registering or completing a batch in parts gives the same result. */
const CHUNK = 65_536;

let exports: Exports | undefined;
let engine: Engine | undefined;
let dead = 0; // an empty tracker that released trackers point at: accepts nothing
let heap = new Float64Array(0); // view of linear memory; re-created after memory grew
let scratchAt = 0; // byte address of the scratch area
let scratchLen = 0; // its size in f64 slots
let wasmComplete: (t: number, handle: number) => number = () => 0;
let finalizer: FinalizationRegistry<number> | undefined;

/** Copies `src[from, from + n)` into the scratch area (one `set`) and returns its byte address. */
function stage(x: Exports, src: Float64Array, from: number, n: number): number {
  if (n > scratchLen) {
    scratchLen = Math.min(CHUNK, Math.max(n, scratchLen * 2, 1024));
    scratchAt = x.scratch(scratchLen);
  }
  if (heap.byteLength === 0) heap = new Float64Array(x.memory.buffer); // new, or detached: memory grew
  const at = scratchAt >>> 3;
  if (n <= 32) {
    for (let i = 0; i < n; i++) heap[at + i] = src[from + i];
  } else {
    heap.set(from === 0 && n === src.length ? src : src.subarray(from, from + n), at);
  }
  return scratchAt;
}

class WasmTracker implements EngineTracker {
  #t: number;
  readonly #x: Exports;

  constructor(x: Exports, t: number) {
    this.#x = x;
    this.#t = t;
  }

  register(offsets: Float64Array, count: number, next: number): number {
    const x = this.#x, t = this.#t;
    if (t === dead) throw new Error("the tracker's storage was released");
    if (count <= CHUNK) return x.register(t, count === 0 ? 0 : stage(x, offsets, 0, count), count, next);
    let first = 0;
    for (let i = 0; i < count; i += CHUNK) {
      const n = Math.min(CHUNK, count - i);
      const h = x.register(t, stage(x, offsets, i, n), n, next);
      if (i === 0) first = h;
    }
    return first;
  }

  complete(handle: number): Completion {
    return wasmComplete(this.#t, handle) as Completion;
  }

  completeMany(handles: Float64Array, count: number): number {
    const x = this.#x, t = this.#t;
    let added = 0;
    for (let i = 0; i < count; i += CHUNK) {
      const n = Math.min(CHUNK, count - i);
      added += x.completeMany(t, stage(x, handles, i, n), n);
    }
    return added;
  }

  completeOffset(offset: number): Completion {
    return this.#x.completeOffset(this.#t, offset) as Completion;
  }

  safe(): number {
    return this.#x.safe(this.#t);
  }

  delivered(): number {
    return this.#x.delivered(this.#t);
  }

  retained(): number {
    return this.#x.retained(this.#t);
  }

  blocked(): number {
    return this.#x.blocked(this.#t);
  }

  headHandle(): number {
    return this.#x.headHandle(this.#t);
  }

  bytes(): number {
    return this.#t === dead ? 0 : this.#x.bytes(this.#t);
  }

  release(): void {
    const t = this.#t;
    if (t === dead) return;
    this.#t = dead;
    finalizer?.unregister(this);
    this.#x.release(t);
  }
}

function instantiate(instance: WebAssembly.Instance): Engine {
  if (engine) return engine;
  const x = instance.exports as unknown as Exports;
  dead = x.open(0, -1);
  wasmComplete = x.complete;
  exports = x;
  const registry = typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry<number>((t) => x.release(t)) // a tracker dropped without revoke() frees its memory
    : undefined;
  finalizer = registry;
  engine = {
    kind: "wasm",
    open(base: number, start: number, _capacity: number): EngineTracker {
      const t = x.open(base, start);
      const tracker = new WasmTracker(x, t);
      registry?.register(tracker, t, tracker);
      return tracker;
    },
  };
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
 * import { ready, Tracker } from "./mod.ts";
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
 * Size of the WASM engine's linear memory in bytes (0 before it is loaded). It only
 * grows; trackers reuse the memory that revoked trackers freed. For tests and monitoring.
 */
export function wasmMemoryBytes(): number {
  return exports ? exports.memory.buffer.byteLength : 0;
}

provideWasmEngine(loadWasmEngine);
