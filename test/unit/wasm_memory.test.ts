import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, EngineUnavailableError, ready, Tracker } from "../../core/mod.ts";
import { provideWasmEngine } from "../../core/tracker/engines.ts";
import type { Engine, EngineTracker } from "../../core/tracker/engine.ts";
import { loadWasmEngine, wasmMemoryUsedBytes, wasmRingAddress } from "../../core/tracker/wasm_engine.ts";
import { wasmBytes } from "../../core/tracker/wasm_bytes.ts";
import { rng, shuffle } from "./random.ts";

/** A tracker's life in a partition assignment: a few records, some completed, then revoke. */
function shortLife(t: Tracker, i: number): void {
  const base = (i % 7) * 1000;
  const h = t.register([base, base + 1, base + 3, base + 4], base + 6);
  assert.equal(t.complete(h + 2), Completion.Completed);
  assert.equal(t.complete(h), Completion.Advanced);
  assert.equal(t.safe, base + 1);
}

describe("WASM memory", () => {
  test("a fresh engine starts with 1 MiB: a million-record tracker fits without growing the memory", () => {
    // Its own instance, so no other test has used the memory yet.
    type Raw = {
      memory: WebAssembly.Memory;
      open(base: number, start: number): number;
      scratch(n: number): number;
      register(t: number, src: number, count: number, next: number): number;
      memoryUsed(): number;
      release(t: number): void;
    };
    const x = new WebAssembly.Instance(new WebAssembly.Module(wasmBytes()), {}).exports as unknown as Raw;
    assert.equal(x.memory.buffer.byteLength, 1 << 20);
    const t = x.open(2 ** 32, 0);
    const src = x.scratch(500);
    for (let o = 0; o < 1_000_000; o += 500) {
      const view = new Float64Array(x.memory.buffer, src, 500);
      for (let i = 0; i < 500; i++) view[i] = o + i;
      assert.equal(x.register(t, src, 500, o + 500), 2 ** 32 + o);
    }
    assert.equal(x.memory.buffer.byteLength, 1 << 20, "the memory grew");
    const used = x.memoryUsed();
    assert.ok(used > 131_072 && used < 1 << 20, `used ${used} bytes`); // the ring alone is 128 KiB
    x.release(t);
    // Past the reserve the memory grows, and the high-water mark follows.
    const big = x.open(2 ** 33, 0);
    for (let o = 0; o < 10_000_000; o += 500) {
      const view = new Float64Array(x.memory.buffer, src, 500);
      for (let i = 0; i < 500; i++) view[i] = o + i;
      x.register(big, src, 500, o + 500);
    }
    assert.ok(x.memory.buffer.byteLength > 1 << 20);
    assert.ok(x.memoryUsed() > 1 << 20 && x.memoryUsed() <= x.memory.buffer.byteLength);
  });
  test("creating and revoking 100,000 trackers keeps the memory used flat after the first round", () => {
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
      sizes.push(wasmMemoryUsedBytes());
    }
    assert.ok(sizes[0] > 0);
    assert.deepEqual(sizes.slice(1), sizes.slice(1).map(() => sizes[0]), `memory used grew after round 1: ${sizes.join(", ")}`);
    // one at a time, too: each revoke frees what the next tracker reuses
    const before = wasmMemoryUsedBytes();
    for (let i = 0; i < 100_000; i++) {
      const t = new Tracker({ start: 0, engine: "wasm" });
      shortLife(t, i);
      t.revoke();
    }
    assert.equal(wasmMemoryUsedBytes(), before);
  });

  test("10,000 live trackers cost well under 10,000 × 64 KiB", () => {
    const before = wasmMemoryUsedBytes();
    const live: Tracker[] = [];
    let held = 0;
    for (let i = 0; i < 10_000; i++) {
      const t = new Tracker({ start: 0, engine: "wasm" });
      shortLife(t, i);
      held += t.stats().bytes;
      live.push(t);
    }
    const grown = wasmMemoryUsedBytes() - before;
    for (const t of live) t.revoke();
    assert.ok(held / 10_000 <= 512, `a small tracker holds ${held / 10_000} bytes`);
    assert.ok(grown < 10_000 * 1024, `10,000 trackers used ${grown} more bytes of linear memory`);
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
    const before = wasmMemoryUsedBytes();
    const h2 = again.register(offsets, 100_000); // reuses the freed ring
    assert.equal(wasmMemoryUsedBytes(), before);
    assert.equal(again.completeMany(Float64Array.from(offsets, (o) => h2 + o)), 100_000);
    assert.equal(again.safe, 100_000);
    again.revoke();
  });

  test("a tracker of 10,000,000 dense records uses at most 0.5 bytes of memory per record: its ring grows in place", () => {
    const n = 10_000_000, batch = 500;
    const t = new Tracker({ start: 0, engine: "wasm", capacity: 1 << 24 });
    const before = wasmMemoryUsedBytes();
    const offsets = new Float64Array(batch);
    let h = 0;
    for (let b = 0; b < n; b += batch) {
      for (let i = 0; i < batch; i++) offsets[i] = b + i;
      const first = t.register(offsets, b + batch);
      if (b === 0) h = first;
    }
    const grown = wasmMemoryUsedBytes() - before;
    const held = t.stats().bytes;
    // a 2^24-bit ring: 2 MiB of bitmap and 32 KiB of summary (0.213 bytes per record)
    assert.ok(held < 2_097_152 + 32_768 + 4096, `the tracker holds ${held} bytes`);
    assert.ok(grown / n <= 0.5, `10,000,000 records used ${grown} more bytes of linear memory (${grown / n} per record)`);
    // In place: the memory used grew by the final ring and a page or two, never holding a ring and its double at once.
    assert.ok(grown <= held + 2 * 65_536, `grew by ${grown} bytes for ${held} held`);
    const handles = new Float64Array(65_536);
    let added = 0;
    for (let i = 0; i < n; i += handles.length) {
      const k = Math.min(handles.length, n - i);
      for (let j = 0; j < k; j++) handles[j] = h + i + j;
      added += t.completeMany(handles.subarray(0, k));
    }
    assert.equal(added, n);
    assert.equal(t.safe, n);
    assert.equal(wasmMemoryUsedBytes() - before, grown);
    t.revoke();
  });

  test("trackers whose rings grow in turn (often into a new block) answer as the JS engine does; revoked, their memory is reused", () => {
    const rand = rng(11);
    const k = 3, rounds = 28;
    const stores: EngineTracker[] = [];
    const capture: Engine = {
      kind: "wasm",
      open: (base, start, capacity) => {
        const store = loadWasmEngine().open(base, start, capacity);
        stores.push(store);
        return store;
      },
    };
    const options = { start: 0, capacity: 1 << 22, clock: () => 0 };
    const js = Array.from({ length: k }, () => new Tracker({ ...options, engine: "js" }));
    const wasm = Array.from({ length: k }, () => new Tracker({ ...options, engine: capture }));
    const firsts: [number, number][] = [];
    const counts = new Array<number>(k).fill(0); // records registered per tracker
    const next = new Array<number>(k).fill(0); // next offset per tracker
    const done = Array.from({ length: k }, () => new Uint8Array(rounds * 60_000)); // 1: completed (by relative handle)
    const lo = new Array<number>(k).fill(0); // records below lo[j] are completed: the head is at or past it
    let peak = 0; // the most records a tracker retained
    const observe = (t: Tracker) => {
      const { engine: _e, bytes: _b, ...rest } = t.stats();
      return { ...rest, safe: t.safe, delivered: t.delivered };
    };
    const completeMany = (j: number, rels: number[]) => {
      const a = js[j].completeMany(Float64Array.from(rels, (r) => firsts[j][0] + r));
      const b = wasm[j].completeMany(Float64Array.from(rels, (r) => firsts[j][1] + r));
      assert.equal(b, a, `tracker ${j}: completeMany of ${rels.length}`);
      for (const r of rels) done[j][r] = 1;
    };
    let moved = 0, inPlace = 0;
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < k; j++) {
        // a batch of 30,000 to 60,000 records, a gap (a new run) now and then
        const size = 30_000 + rand(30_000);
        const batch = new Float64Array(size);
        for (let i = 0; i < size; i++) {
          batch[i] = next[j];
          next[j] += rand(1000) === 0 ? 3 : 1;
        }
        const at = wasmRingAddress(stores[j]), bytes = wasm[j].stats().bytes;
        const a = js[j].register(batch, next[j]), b = wasm[j].register(batch, next[j]);
        if (round === 0) firsts[j] = [a, b];
        assert.equal(b - firsts[j][1], a - firsts[j][0], `tracker ${j}, round ${round}: relative handle`);
        if (bytes > 65_536 && wasm[j].stats().bytes > bytes) { // a large ring grew
          if (wasmRingAddress(stores[j]) === at) inPlace++;
          else moved++;
        }
        // complete about half of the new records in random order
        const rels: number[] = [];
        for (let r = counts[j]; r < counts[j] + size; r++) if (rand(2) === 0) rels.push(r);
        completeMany(j, shuffle(rels, rand));
        counts[j] += size;
        peak = Math.max(peak, js[j].stats().retained);
        // every third round, all of the oldest 12,000: the head moves on, and the retained range wraps round the ring
        if ((round + j) % 3 === 0) {
          const old: number[] = [];
          for (let r = lo[j]; r < lo[j] + 12_000; r++) if (done[j][r] === 0) old.push(r);
          completeMany(j, shuffle(old, rand));
          lo[j] += 12_000;
        }
        assert.deepEqual(observe(wasm[j]), observe(js[j]), `tracker ${j}, round ${round}`);
      }
    }
    assert.ok(moved > 0, `large rings grew ${inPlace} times in place and ${moved} times into a new block`);
    for (let j = 0; j < k; j++) {
      assert.ok(js[j].stats().retained > 1 << 20, `tracker ${j} retains ${js[j].stats().retained}`);
      const rest = shuffle(Array.from({ length: counts[j] - lo[j] }, (_, i) => lo[j] + i).filter((r) => done[j][r] === 0), rand);
      for (let i = 0; i < rest.length; i += 10_000) completeMany(j, rest.slice(i, i + 10_000));
      assert.deepEqual(observe(wasm[j]), observe(js[j]), `tracker ${j}, all completed`);
      assert.equal(wasm[j].safe, next[j]);
    }
    for (const t of [...js, ...wasm]) t.revoke();
    // A tracker retaining as many records as the largest of them fits in the memory they freed.
    const before = wasmMemoryUsedBytes();
    const t = new Tracker({ ...options, engine: "wasm" });
    for (let n = 0; n < peak; n += 30_000) {
      const size = Math.min(30_000, peak - n);
      t.register(Array.from({ length: size }, (_, i) => n + i), n + size);
    }
    assert.equal(t.stats().retained, peak);
    assert.equal(wasmMemoryUsedBytes(), before);
    t.revoke();
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
      const specifier = "../../core/tracker/wasm_engine.ts?without-webassembly"; // a variable: tsc does not resolve it
      const fresh: typeof import("../../core/tracker/wasm_engine.ts") = await import(specifier);
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
