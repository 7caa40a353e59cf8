import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, EngineUnavailableError, ready, Tracker } from "../../core/mod.ts";
import { provideWasmEngine } from "../../core/engines.ts";
import { loadWasmEngine, wasmMemoryBytes } from "../../core/wasm_engine.ts";

/** A tracker's life in a partition assignment: a few records, some completed, then revoke. */
function shortLife(t: Tracker, i: number): void {
  const base = (i % 7) * 1000;
  const h = t.register([base, base + 1, base + 3, base + 4], base + 6);
  assert.equal(t.complete(h + 2), Completion.Completed);
  assert.equal(t.complete(h), Completion.Advanced);
  assert.equal(t.safe, base + 1);
}

describe("WASM memory", () => {
  test("creating and revoking 100,000 trackers keeps linear memory flat after the first round", () => {
    const rounds = 10, perRound = 10_000;
    const sizes: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const live: Tracker[] = [];
      for (let i = 0; i < perRound; i++) {
        const t = new Tracker({ start: 0, engine: "wasm" });
        shortLife(t, i);
        live.push(t);
      }
      for (const t of live) t.revoke();
      sizes.push(wasmMemoryBytes());
    }
    assert.ok(sizes[0] > 0);
    assert.deepEqual(sizes.slice(1), sizes.slice(1).map(() => sizes[0]), `memory grew after round 1: ${sizes.join(", ")}`);
    // one at a time, too: each revoke frees what the next tracker reuses
    const before = wasmMemoryBytes();
    for (let i = 0; i < 100_000; i++) {
      const t = new Tracker({ start: 0, engine: "wasm" });
      shortLife(t, i);
      t.revoke();
    }
    assert.equal(wasmMemoryBytes(), before);
  });

  test("10,000 live trackers cost well under 10,000 × 64 KiB", () => {
    const before = wasmMemoryBytes();
    const live: Tracker[] = [];
    let held = 0;
    for (let i = 0; i < 10_000; i++) {
      const t = new Tracker({ start: 0, engine: "wasm" });
      shortLife(t, i);
      held += t.stats().bytes;
      live.push(t);
    }
    const grown = wasmMemoryBytes() - before;
    for (const t of live) t.revoke();
    assert.ok(held / 10_000 <= 512, `a small tracker holds ${held / 10_000} bytes`);
    assert.ok(grown < 10_000 * 1024, `10,000 trackers grew linear memory by ${grown} bytes`);
  });

  test("a tracker grows by doubling only as its retained entries need, and its memory is reused after revoke", () => {
    const t = new Tracker({ start: 0, engine: "wasm" });
    const small = t.stats().bytes;
    const offsets = Array.from({ length: 100_000 }, (_, i) => i);
    const h = t.register(offsets, 100_000);
    const big = t.stats().bytes;
    // 100,000 bits round up to a 131,072-bit ring: 16 KiB of bitmap, a little summary, the struct and runs
    assert.ok(big > 16_384 && big < 16_384 + 1024, `bytes ${big}`);
    for (let i = 0; i < 100_000; i++) t.complete(h + i);
    assert.equal(t.safe, 100_000);
    t.revoke();
    const again = new Tracker({ start: 0, engine: "wasm" });
    assert.equal(again.stats().bytes, small);
    const before = wasmMemoryBytes();
    const h2 = again.register(offsets, 100_000); // reuses the freed ring
    assert.equal(wasmMemoryBytes(), before);
    assert.equal(again.completeMany(Float64Array.from(offsets, (o) => h2 + o)), 100_000);
    assert.equal(again.safe, 100_000);
    again.revoke();
  });
});

describe("WASM engine loading", () => {
  test("auto means WASM; ready() resolves and is idempotent", async () => {
    await ready();
    await ready();
    assert.equal(new Tracker().engine, "wasm");
    assert.equal(new Tracker({ engine: "wasm" }).engine, "wasm");
    assert.equal(new Tracker({ engine: "js" }).engine, "js");
    assert.equal(loadWasmEngine().kind, "wasm");
    assert.equal(loadWasmEngine(), loadWasmEngine());
  });

  test("without WebAssembly: engine \"wasm\" throws EngineUnavailableError, auto falls back to JS, ready() rejects", async () => {
    const g = globalThis as { WebAssembly?: unknown };
    const saved = g.WebAssembly;
    try {
      delete g.WebAssembly;
      // a fresh copy of the binding, as in a runtime without WebAssembly; importing it registers its loader
      const specifier = "../../core/wasm_engine.ts?without-webassembly"; // a variable: tsc does not resolve it
      const fresh: typeof import("../../core/wasm_engine.ts") = await import(specifier);
      assert.throws(() => new Tracker({ engine: "wasm" }), (e: unknown) => {
        assert.ok(e instanceof EngineUnavailableError);
        assert.match(e.message, /engine "wasm" was requested but cannot load: WebAssembly is not available/);
        return true;
      });
      assert.equal(new Tracker().engine, "js");
      await assert.rejects(fresh.ready(), EngineUnavailableError);
      assert.throws(() => fresh.loadWasmEngine(), EngineUnavailableError);
    } finally {
      g.WebAssembly = saved;
      provideWasmEngine(loadWasmEngine);
    }
    assert.equal(new Tracker().engine, "wasm");
  });

  test("a released engine tracker accepts nothing and cannot register", () => {
    const store = loadWasmEngine().open(0, 5, 16);
    const h = store.register(Float64Array.of(5, 6), 2, 7);
    assert.equal(store.complete(h), Completion.Advanced);
    store.release();
    store.release(); // idempotent
    assert.equal(store.complete(h + 1), Completion.Rejected);
    assert.equal(store.completeMany(Float64Array.of(h, h + 1), 2), 0);
    assert.equal(store.completeOffset(6), Completion.Rejected);
    assert.equal(store.retained(), 0);
    assert.equal(store.bytes(), 0);
    assert.throws(() => store.register(Float64Array.of(7), 1, 8));
  });
});
