/**
 * The WASM binding's per-call fast path (core/tracker/wasm_engine.ts sets a record's bit from JS
 * over linear memory and calls WASM only for the head, a word that fills, and handles
 * outside the retained records) agrees with the JS engine and with the pure-WASM call
 * path on every answer, position and stat: at the cases where it hands over to WASM
 * (head completions, completions that fill a 64-bit word, in both halves of a word, in
 * wrapped rings) and right after the linear memory grew (which detaches its views), and so does
 * `retained`, which the fast path reads from the struct in JS. The
 * two WASM trackers' ring blocks (bitmap and summary words) stay byte for byte the same.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Tracker, type TrackerOptions } from "../../core/mod.ts";
import type { Engine, EngineTracker } from "../../core/tracker/engine.ts";
import { loadWasmEngine, wasmCallEngine, wasmMemoryBytes, wasmRingBytes } from "../../core/tracker/wasm_engine.ts";
import { rng, shuffle } from "./random.ts";

/** Everything observable of a tracker except the engine's name and its byte count. */
function observe(t: Tracker): unknown {
  if (t.revoked) return "revoked";
  const { engine: _e, bytes: _b, ...rest } = t.stats();
  return { ...rest, safe: t.safe, delivered: t.delivered, retainedNow: t.retained }; // retained: the getter (JS reads LEN on the fast path)
}

/** The same operations on the JS engine, the WASM engine and the WASM engine without the fast path. */
class Trio {
  readonly trackers: Tracker[];
  readonly first: (number | undefined)[] = [undefined, undefined, undefined];
  readonly offsets: number[] = [];
  /** The engine trackers behind the WASM and the pure-WASM-call trackers. */
  readonly stores: EngineTracker[] = [];

  constructor(options: TrackerOptions) {
    const capture = (engine: Engine): Engine => ({
      kind: engine.kind,
      open: (base, start, capacity) => {
        const store = engine.open(base, start, capacity);
        this.stores.push(store);
        return store;
      },
    });
    this.trackers = [
      new Tracker({ ...options, engine: "js", clock: () => 0 }),
      new Tracker({ ...options, engine: capture(loadWasmEngine()), clock: () => 0 }),
      new Tracker({ ...options, engine: capture(wasmCallEngine()), clock: () => 0 }),
    ];
    assert.deepEqual(this.trackers.map((t) => t.engine), ["js", "wasm", "wasm"]);
  }

  /** Registers dense offsets from the last `next` on (plus `gap`); returns the first relative handle. */
  registerDense(n: number, gap = 0): number {
    const from = (this.trackers[0].delivered ?? 0) + gap;
    const offsets = Array.from({ length: n }, (_, i) => from + i);
    const rel = this.offsets.length;
    this.trackers.forEach((t, k) => {
      const h = t.register(offsets, from + n);
      this.first[k] ??= h;
      assert.equal(h - this.first[k]!, rel, "relative handle of the batch");
    });
    this.offsets.push(...offsets);
    return rel;
  }

  /** Completes relative handle `rel` (any number) on all three; asserts they agree and returns the answer. */
  complete(rel: number): number {
    const [a, b, c] = this.trackers.map((t, k) => t.complete((this.first[k] ?? 0) + rel));
    if (b !== a || c !== a) assert.deepEqual([a, b, c], [a, a, a], `complete(${rel})`);
    return a;
  }

  completeMany(rels: number[]): number {
    const [a, b, c] = this.trackers.map((t, k) =>
      t.completeMany(Float64Array.from(rels, (r) => (this.first[k] ?? 0) + r))
    );
    assert.deepEqual([a, b, c], [a, a, a], `completeMany of ${rels.length}`);
    return a;
  }

  completeOffset(offset: number): number {
    const [a, b, c] = this.trackers.map((t) => t.completeOffset(offset));
    assert.deepEqual([a, b, c], [a, a, a], `completeOffset(${offset})`);
    return a;
  }

  check(label: string): void {
    const [a, b, c] = this.trackers.map(observe);
    assert.deepEqual(b, a, `${label}: WASM`);
    assert.deepEqual(c, a, `${label}: pure-WASM calls`);
    const [fast, call] = this.stores.map(wasmRingBytes);
    assert.ok(this.trackers[1].revoked || fast.length > 0);
    assert.deepEqual(fast, call, `${label}: ring blocks`);
  }

  revoke(): void {
    for (const t of this.trackers) t.revoke();
  }
}


/**
 * Registers ever larger batches of gappy offsets (one 16-byte run per record) on a fresh
 * WASM tracker until the linear memory grows, which detaches every view of it; returns
 * the tracker (revoke it). The memory only grows and freed blocks are reused first, so
 * each call registers until its runs outgrow what earlier calls left free.
 */
function growMemory(): Tracker {
  const g = new Tracker({ start: 0, engine: "wasm", capacity: 1 << 30 });
  const before = wasmMemoryBytes();
  for (let n = 1 << 12; wasmMemoryBytes() === before; n *= 2) {
    assert.ok(n <= 1 << 24, "the linear memory did not grow");
    const from = g.delivered!;
    g.register(Float64Array.from({ length: n }, (_, i) => from + 2 * i), from + 2 * n);
  }
  return g;
}

/** A side tracker's batch of `n` gappy offsets: grows the memory or reuses freed blocks. */
function sideBatch(n: number): Tracker {
  const g = new Tracker({ start: 0, engine: "wasm", capacity: 1 << 30 });
  g.register(Float64Array.from({ length: n }, (_, i) => 2 * i), 2 * n);
  return g;
}

describe("WASM per-call fast path", () => {
  test("completions that fill 64-bit words (either half last), behind heads at every alignment, in wrapped rings", () => {
    const rand = rng(11);
    for (const capacity of [512, 100_000]) {
      for (const shift of [0, 1, 31, 32, 33, 63, 64, 65, 200, 480]) {
        const p = new Trio({ start: 0, capacity });
        if (shift > 0) {
          p.registerDense(shift);
          for (let r = 0; r < shift; r++) assert.equal(p.complete(r), 3);
        }
        const first = p.registerDense(500);
        // fill the words behind the head's word one by one (relative handles are seqs, and
        // ring words hold 64 consecutive seqs), the last bit of each word in the low half,
        // the high half, or the middle
        const lasts = [0, 31, 32, 63, 17];
        for (let w = Math.ceil((first + 1) / 64), j = 0; (w + 1) * 64 <= first + 500; w++, j++) {
          const lo = w * 64, last = lo + lasts[j % lasts.length];
          for (const r of shuffle(Array.from({ length: 64 }, (_, i) => lo + i), rand)) {
            if (r !== last) assert.equal(p.complete(r), 2);
          }
          assert.equal(p.complete(last), 2); // fills the word: its summary bit is set in WASM
          p.check(`capacity ${capacity}, shift ${shift}, word ${w}, last bit ${last - lo}`);
          for (let r = lo; r < lo + 64; r++) assert.equal(p.complete(r), 1);
        }
        assert.equal(p.trackers[1].safe, shift); // the head is still open
        for (let r = first + 1; r < first + 500; r++) p.complete(r);
        p.check("all but the head");
        assert.equal(p.complete(first), 3); // Advanced past 500 records through the summary
        assert.equal(p.trackers[1].safe, shift + 500);
        p.check("head completed");
        p.revoke();
      }
    }
  });

  test("head completions in order, descending order, and strays around the retained records", () => {
    const p = new Trio({ start: 100 });
    p.registerDense(3000);
    for (let r = 0; r < 700; r++) assert.equal(p.complete(r), 3);
    for (let r = 1499; r > 700; r--) assert.equal(p.complete(r), 2);
    for (const stray of [699, 0, -1, 700.5, 1500.25, 3000, 3001, NaN, Infinity, -Infinity, -0, 2 ** 53, 1e300]) {
      p.complete(stray);
    }
    p.check("strays");
    assert.equal(p.complete(700), 3);
    assert.equal(p.trackers[1].safe, 1600);
    for (let r = 2999; r >= 1500; r--) p.complete(r);
    p.check("all completed");
    assert.equal(p.trackers[1].safe, 3100);
    p.revoke();
  });

  test("completions right after another tracker grew the linear memory, and after the tracker's own ring grew", () => {
    const rand = rng(3);
    const p = new Trio({ start: 0 });
    p.registerDense(400); // the first ring: 512 bits
    const open = shuffle(Array.from({ length: 399 }, (_, i) => i + 1), rand);
    for (const r of open.slice(0, 100)) p.complete(r);
    const g = growMemory(); // detaches the views the fast path read so far
    for (const r of open.slice(100, 200)) p.complete(r);
    p.check("after another tracker grew the memory");
    // the tracker's own ring grows: the bits set from JS are re-laid by WASM
    p.registerDense(20_000, 3);
    p.check("after the ring grew");
    for (const r of open.slice(200)) p.complete(r);
    g.revoke();
    const g2 = growMemory();
    const rest = shuffle(Array.from({ length: 20_000 }, (_, i) => 400 + i), rand);
    for (const r of rest.slice(0, 10_000)) p.complete(r);
    p.check("after the memory grew again");
    assert.equal(p.complete(0), 3);
    for (const r of rest.slice(10_000)) p.complete(r);
    p.check("all completed");
    assert.equal(p.trackers[1].safe, 20_403);
    g2.revoke();
    p.revoke();
  });

  test("a revoked tracker's handles are rejected by a tracker that reuses its memory", () => {
    const a = new Trio({ start: 0 });
    a.registerDense(300);
    a.complete(5);
    a.revoke();
    for (const [k, t] of a.trackers.entries()) assert.equal(t.complete(a.first[k]! + 6), 0);
    const b = new Trio({ start: 0 });
    b.registerDense(300);
    for (const [k, t] of b.trackers.entries()) assert.equal(t.complete(a.first[k]! + 7), 0, "a stale handle");
    assert.equal(b.complete(7), 2);
    b.check("reused memory");
    b.revoke();
  });

  test("after the head moved in WASM (by offset, in a batch, by a handle that fills a word), the next per-call completion sees it", () => {
    const p = new Trio({ start: 0 });
    p.registerDense(600);
    for (let r = 2; r < 10; r++) assert.equal(p.complete(r), 2);
    assert.equal(p.completeOffset(0), 3); // the head moves to 1
    assert.equal(p.complete(1), 3); // the new head: Advanced (the head moves to 10)
    for (let r = 11; r < 20; r++) p.complete(r);
    assert.equal(p.completeMany([10]), 1); // the head moves to 20
    assert.equal(p.complete(20), 3);
    assert.equal(p.complete(15), 1);
    for (let r = 22; r < 128; r++) p.complete(r); // fills the words of 22..127 (the last one in WASM)
    assert.equal(p.completeOffset(21), 3); // through the summary to 128
    assert.equal(p.complete(128), 3);
    assert.equal(p.complete(127), 1);
    p.check("after the head moved");
    p.revoke();
  });

  test("a released engine tracker never touches the memory a later tracker reuses", () => {
    const engine = loadWasmEngine();
    const a = engine.open(0, 0, 1000);
    const ha = a.register(Float64Array.from({ length: 300 }, (_, i) => i), 300, 300);
    assert.equal(a.complete(ha + 5), 2);
    a.release();
    const b = engine.open(2 ** 32, 0, 1000); // reuses a's struct and ring
    const hb = b.register(Float64Array.from({ length: 300 }, (_, i) => i), 300, 300);
    for (const r of [0, 6, 7, 200, 299]) assert.equal(a.complete(ha + r), 0);
    assert.equal(a.completeMany(Float64Array.of(ha + 8, ha + 9), 2), 0);
    assert.equal(a.completeOffset(10), 0);
    assert.equal(b.blocked(), 0);
    assert.equal(b.complete(hb + 6), 2);
    assert.equal(b.complete(hb + 5), 2);
    assert.equal(b.blocked(), 2);
    b.release();
  });

  test("generated sequences: per-call, batch and by-offset completion with memory growth in between", () => {
    type Op =
      | { k: "register"; n: number; gap: number }
      | { k: "complete"; pick: number; near: boolean; frac: boolean }
      | { k: "run"; from: number; len: number; seed: number }
      | { k: "many"; picks: number[] }
      | { k: "offset"; pick: number }
      | { k: "grow" };
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 2,
        arbitrary: fc.record({
          k: fc.constant("register" as const),
          n: fc.integer({ min: 1, max: 3000 }),
          gap: fc.integer({ min: 0, max: 2 }),
        }),
      },
      {
        weight: 10,
        arbitrary: fc.record({
          k: fc.constant("complete" as const),
          pick: fc.nat(),
          near: fc.boolean(),
          frac: fc.boolean(),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          k: fc.constant("run" as const),
          from: fc.nat(),
          len: fc.integer({ min: 1, max: 2000 }),
          seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ k: fc.constant("many" as const), picks: fc.array(fc.nat(), { maxLength: 40 }) }),
      },
      { weight: 2, arbitrary: fc.record({ k: fc.constant("offset" as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.constant({ k: "grow" as const }) },
    ) as fc.Arbitrary<Op>;
    const grown: Tracker[] = [];
    try {
      fc.assert(
        fc.property(
          fc.constantFrom(512, 4096, 1 << 20),
          fc.array(op, { minLength: 5, maxLength: 60 }),
          (capacity, ops) => {
            const p = new Trio({ start: 0, capacity });
            try {
              for (const [i, o] of ops.entries()) {
                const n = p.offsets.length;
                const head = p.trackers[0].stats().retained; // retained: head = n - retained
                const headRel = n - head;
                switch (o.k) {
                  case "register":
                    if (p.trackers[0].stats().retained + o.n <= capacity) p.registerDense(o.n, o.gap);
                    break;
                  case "complete": {
                    const r = o.near ? headRel - 2 + (o.pick % 132) : (o.pick % (n + 6)) - 3;
                    p.complete(o.frac ? r + 0.5 : r);
                    break;
                  }
                  case "run": {
                    const from = headRel + (o.from % Math.max(1, n - headRel + 1));
                    const rels = shuffle(Array.from({ length: o.len }, (_, j) => from + j), rng(o.seed));
                    for (const r of rels) p.complete(r);
                    break;
                  }
                  case "many":
                    p.completeMany(o.picks.map((x) => (x % (n + 4)) - 2));
                    break;
                  case "offset":
                    if (n > 0) p.completeOffset(Math.max(0, p.offsets[o.pick % n] + (o.pick % 3) - 1));
                    break;
                  case "grow": // a side tracker's batch: grows the memory at first, later reuses what was freed
                    if (grown.length < 2) grown.push(sideBatch(100_000));
                    else grown.shift()!.revoke();
                    break;
                }
                p.check(`after op ${i}: ${JSON.stringify(o)}`);
              }
            } finally {
              p.revoke();
            }
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      for (const g of grown) g.revoke();
    }
  });
});
