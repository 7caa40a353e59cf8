/**
 * Engine selection: `"auto"` (WASM when it loads, else JS), `"wasm"`, `"js"`, or an
 * {@link Engine} object. WASM support registers itself here when its module is
 * imported, so the JS-only build carries no WASM bytes.
 *
 * @module
 */
import type { Engine } from "./engine.ts";
import { EngineUnavailableError, InvalidArgumentError, describe } from "../errors.ts";
import { jsEngine } from "./js_engine.ts";

/** How to pick the engine of a tracker. */
export type EngineChoice = "auto" | "js" | "wasm" | Engine;

let wasmLoader: (() => Engine) | undefined;
let wasmEngine: Engine | undefined;
let wasmFailure: unknown;

/** Installs the WASM engine's loader (called by the WASM engine module). */
export function provideWasmEngine(load: () => Engine): void {
  wasmLoader = load;
  wasmEngine = undefined;
  wasmFailure = undefined;
}

function loadWasm(): Engine | undefined {
  if (wasmEngine || wasmFailure !== undefined) return wasmEngine;
  if (!wasmLoader) return undefined;
  try {
    wasmEngine = wasmLoader();
  } catch (error) {
    wasmFailure = error;
  }
  return wasmEngine;
}

/**
 * Resolves an engine choice.
 * @throws {EngineUnavailableError} for `"wasm"` when the WASM engine cannot load
 * @throws {InvalidArgumentError} for anything that is not a choice
 */
export function resolveEngine(choice: EngineChoice = "auto"): Engine {
  if (choice === "js") return jsEngine;
  if (choice === "auto") return loadWasm() ?? jsEngine;
  if (choice === "wasm") {
    const engine = loadWasm();
    if (engine) return engine;
    const why = wasmFailure instanceof Error ? wasmFailure.message : wasmLoader ? String(wasmFailure) : "it is not built in";
    throw new EngineUnavailableError(`engine "wasm" was requested but cannot load: ${why}`);
  }
  if (typeof choice === "object" && choice !== null && typeof choice.open === "function") return choice;
  throw new InvalidArgumentError(`engine must be "auto", "js", "wasm" or an Engine; got ${describe(choice)}`);
}
