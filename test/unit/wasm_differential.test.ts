/**
 * The WASM engine agrees with the JS engine (the reference) on every operation: the
 * same inputs go to a JS tracker and a WASM tracker, and every return value, thrown
 * error (class and message), position and stat must be identical. Handles differ by
 * each tracker's base, so they are compared relative to the tracker's first handle.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { type OffsetInput, Tracker, type TrackerOptions } from "../../core/mod.ts";
import type { Engine, EngineTracker } from "../../core/tracker/engine.ts";
import { loadWasmEngine, wasmMemoryBytes, wasmRingAddress } from "../../core/tracker/wasm_engine.ts";
import { rng, shuffle } from "./random.ts";

type Outcome = { ok: unknown } | { error: string; message: string };

function outcome(f: () => unknown): Outcome {
  try {
    return { ok: f() };
  } catch (e) {
    return { error: (e as Error).constructor.name, message: (e as Error).message };
  }
}

const RUNS_OBSERVED = 1024; // the first pairs of unfinishedRuns (test/unit/unfinished_runs.test.ts reads them all)
const runsOut = new Float64Array(2 * RUNS_OBSERVED);

/** Everything observable of a tracker except the engine's name and its own byte count. */
function observe(t: Tracker): unknown {
  const stats = outcome(() => {
    const { engine: _e, bytes: _b, ...rest } = t.stats();
    return rest;
  });
  return {
    revoked: t.revoked,
    capacity: t.capacity,
    safe: outcome(() => t.safe),
    delivered: outcome(() => t.delivered),
    stats,
    unfinishedRuns: outcome(() => {
      const n = t.unfinishedRuns(runsOut, RUNS_OBSERVED);
      return Array.from(runsOut.subarray(0, 2 * n));
    }),
  };
}

/** A JS tracker and a WASM tracker fed the same operations. */
class Pair {
  readonly js: Tracker;
  readonly wasm: Tracker;
  jsFirst: number | undefined;
  wasmFirst: number | undefined;
  /** Offsets registered so far, by relative handle. */
  readonly offsets: number[] = [];

  constructor(options: TrackerOptions, wasm: Engine | "wasm" = "wasm") {
    this.js = new Tracker({ ...options, engine: "js" });
    this.wasm = new Tracker({ ...options, engine: wasm });
    assert.equal(this.js.engine, "js");
    assert.equal(this.wasm.engine, "wasm");
  }

  /** The handle of relative position `rel` on each side (raw `rel` before the first handle is known). */
  handles(rel: number): [number, number] {
    return [(this.jsFirst ?? 0) + rel, (this.wasmFirst ?? 0) + rel];
  }

  register(offsets: readonly OffsetInput[], next: OffsetInput, plain?: readonly number[]): Outcome {
    const a = outcome(() => this.js.register(offsets, next));
    const b = outcome(() => this.wasm.register(offsets, next));
    if ("ok" in a && "ok" in b) {
      this.jsFirst ??= a.ok as number;
      this.wasmFirst ??= b.ok as number;
      const ra = (a.ok as number) - this.jsFirst, rb = (b.ok as number) - this.wasmFirst;
      assert.equal(rb, ra, "register returns the same relative handle");
      assert.equal(ra, this.offsets.length);
      for (const o of plain ?? (offsets as number[])) this.offsets.push(o);
      return { ok: ra };
    }
    assert.deepEqual(b, a, `register ${offsets.length} offsets, next ${String(next)}`);
    return a;
  }

  complete(jsHandle: number, wasmHandle: number): number {
    const a = this.js.complete(jsHandle), b = this.wasm.complete(wasmHandle);
    assert.equal(b, a, `complete(${jsHandle - (this.jsFirst ?? 0)})`);
    return a;
  }

  completeRel(rel: number): number {
    const [a, b] = this.handles(rel);
    return this.complete(a, b);
  }

  completeMany(jsHandles: number[], wasmHandles: number[], typed: boolean): number {
    const a = this.js.completeMany(typed ? Float64Array.from(jsHandles) : jsHandles);
    const b = this.wasm.completeMany(typed ? Float64Array.from(wasmHandles) : wasmHandles);
    assert.equal(b, a, `completeMany of ${jsHandles.length}`);
    return a;
  }

  completeOffset(offset: OffsetInput): Outcome {
    const a = outcome(() => this.js.completeOffset(offset));
    const b = outcome(() => this.wasm.completeOffset(offset));
    assert.deepEqual(b, a, `completeOffset(${String(offset)})`);
    return a;
  }

  revoke(): void {
    this.js.revoke();
    this.wasm.revoke();
  }

  check(label: string): void {
    assert.deepEqual(observe(this.wasm), observe(this.js), label);
  }
}


// ---------------------------------------------------------------- generated sequences

type Form = "number" | "string" | "bigint";
type HandleKind =
  | "valid"
  | "nearHead"
  | "beyond"
  | "stale"
  | "foreign"
  | "swapped"
  | "fraction"
  | "nan"
  | "negative"
  | "infinite"
  | "huge"
  | "negzero";
type HandleSpec = { kind: HandleKind; pick: number };
type OffsetKind = "registered" | "below" | "beyond" | "invalid";
type Op =
  | { k: "register"; startGap: number; gaps: number[]; tail: number; form: Form }
  | { k: "registerEmpty"; delta: number }
  | { k: "registerDense"; startGap: number; n: number }
  | { k: "complete"; h: HandleSpec }
  | { k: "completeMany"; hs: HandleSpec[]; typed: boolean }
  | { k: "completeRun"; from: number; fromHead: boolean; len: number; seed: number; via: "complete" | "many" | "offset" | "descending" }
  | { k: "completeOffset"; kind: OffsetKind; pick: number; shift: number }
  | { k: "revoke" }
  | { k: "tick"; ms: number };

const gap = fc.oneof(
  { weight: 30, arbitrary: fc.constant(1) },
  { weight: 6, arbitrary: fc.integer({ min: 2, max: 3 }) },
  { weight: 3, arbitrary: fc.integer({ min: 4, max: 1000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1001, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -1, max: 0 }) }, // unsorted: InvalidBatchError
);
const handleSpec: fc.Arbitrary<HandleSpec> = fc.record({
  kind: fc.constantFrom<HandleKind>(
    "valid",
    "valid",
    "valid",
    "valid",
    "valid",
    "nearHead",
    "nearHead",
    "nearHead",
    "beyond",
    "stale",
    "foreign",
    "swapped",
    "fraction",
    "nan",
    "negative",
    "infinite",
    "huge",
    "negzero",
  ),
  pick: fc.nat(),
});
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("register" as const),
      startGap: fc.oneof(
        { weight: 10, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 2, arbitrary: fc.integer({ min: 4, max: 1_000_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -3, max: -1 }) }, // overlap: InvalidBatchError
      ),
      gaps: fc.array(gap, { maxLength: 40 }), // empty: a batch of one record
      tail: fc.oneof(
        { weight: 10, arbitrary: fc.integer({ min: 1, max: 3 }) },
        { weight: 1, arbitrary: fc.integer({ min: 4, max: 1_000_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -1, max: 0 }) },
      ),
      form: fc.constantFrom<Form>("number", "number", "string", "bigint"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("registerEmpty" as const), delta: fc.integer({ min: -2, max: 5 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("registerDense" as const),
      startGap: fc.integer({ min: 0, max: 2 }),
      n: fc.integer({ min: 1, max: 5000 }),
    }),
  },
  { weight: 8, arbitrary: fc.record({ k: fc.constant("complete" as const), h: handleSpec }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("completeMany" as const),
      hs: fc.array(handleSpec, { maxLength: 30 }),
      typed: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("completeRun" as const),
      from: fc.nat(),
      fromHead: fc.boolean(),
      len: fc.integer({ min: 1, max: 3000 }),
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      via: fc.constantFrom("complete" as const, "many" as const, "offset" as const, "descending" as const),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("completeOffset" as const),
      kind: fc.constantFrom<OffsetKind>("registered", "registered", "registered", "below", "beyond", "invalid"),
      pick: fc.nat(),
      shift: fc.integer({ min: -3, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "revoke" as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 5000 }) }) },
) as fc.Arbitrary<Op>;

const start = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2 ** 53 - 2 ** 31, max: 2 ** 53 - 2 ** 21 }) }, // offsets near the limit
);
const capacity = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 64 }) },
  { weight: 2, arbitrary: fc.integer({ min: 65, max: 20_000 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const INVALID_OFFSETS: unknown[] = [-1, 1.5, NaN, Infinity, 2 ** 53, "abc", "-1", -1n, null];

function form(o: number, f: Form): OffsetInput {
  return f === "bigint" ? BigInt(o) : f === "string" ? String(o) : o;
}

interface Context {
  pair: Pair;
  stale: Pair; // a revoked pair of an earlier assignment
  foreign: Pair; // a live pair of another partition
  now: { ms: number };
}

/** Relative handle of the oldest unfinished record (the JS tracker's safe position), or the record count. */
function headIndex(p: Pair): number {
  if (p.js.revoked) return 0;
  const safe = p.js.safe ?? -1;
  let lo = 0, hi = p.offsets.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (p.offsets[mid] < safe) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function handlePair(c: Context, h: HandleSpec): [number, number] {
  const p = c.pair, n = p.offsets.length;
  switch (h.kind) {
    case "valid":
      return p.handles(n === 0 ? h.pick % 4 : h.pick % n);
    case "nearHead": // the records sharing the head's bitmap words
      return p.handles(Math.max(0, headIndex(p) + (h.pick % 140) - 4));
    case "beyond":
      return p.handles(n + (h.pick % 5));
    case "stale":
      return c.stale.handles(h.pick % 4);
    case "foreign":
      return c.foreign.handles(h.pick % 4);
    case "swapped": {
      const [a, b] = p.handles(n === 0 ? 0 : h.pick % n);
      return [b, a];
    }
    case "fraction": {
      const [a, b] = p.handles(n === 0 ? 0 : h.pick % n);
      const f = [0.5, 0.25, 1e-6, -0.5][h.pick % 4];
      // The two trackers' bases may differ in magnitude (slices are reused above a floor):
      // where a + f rounds to an integer on one side only, both get the exact half.
      return Number.isInteger(a + f) || Number.isInteger(b + f) ? [a + 0.5, b + 0.5] : [a + f, b + f];
    }
    case "nan":
      return [NaN, NaN];
    case "negative": {
      const v = -1 - (h.pick % 1000);
      return [v, v];
    }
    case "infinite":
      return h.pick % 2 === 0 ? [Infinity, Infinity] : [-Infinity, -Infinity];
    case "huge": {
      const v = [2 ** 53, 2 ** 60, Number.MAX_VALUE, 2 ** 52 + 3][h.pick % 4];
      return [v, v];
    }
    case "negzero":
      return [-0, -0];
  }
}

function offsetFor(c: Context, kind: OffsetKind, pick: number, shift: number): unknown {
  const p = c.pair, n = p.offsets.length;
  switch (kind) {
    case "registered":
      return n === 0 ? pick % 10 : Math.max(0, p.offsets[pick % n] + shift);
    case "below":
      return n === 0 ? 0 : Math.max(0, p.offsets[0] - 1 - (pick % 3));
    case "beyond": {
      const d = p.js.revoked ? 0 : p.js.delivered ?? 0;
      return d + (pick % 3);
    }
    case "invalid":
      return INVALID_OFFSETS[pick % INVALID_OFFSETS.length];
  }
}

function apply(c: Context, o: Op): void {
  const p = c.pair;
  switch (o.k) {
    case "register": {
      const floor = p.js.revoked ? 0 : p.js.delivered ?? (p.offsets.length ? p.offsets[p.offsets.length - 1] + 1 : 0);
      let cur = floor + o.startGap;
      const offsets: number[] = [];
      for (const d of [0, ...o.gaps]) offsets.push((cur += d));
      const next = cur + o.tail;
      const inputs = offsets.map((x) => (x < 0 || !Number.isSafeInteger(x) ? x : form(x, o.form)));
      p.register(inputs, Number.isSafeInteger(next) && next >= 0 ? form(next, o.form) : next, offsets);
      break;
    }
    case "registerEmpty": {
      // only `next` moves (or the batch is refused when `next` goes back)
      const floor = p.js.revoked ? 0 : p.js.delivered ?? 0;
      p.register([], Math.max(0, floor + o.delta));
      break;
    }
    case "registerDense": {
      const floor = p.js.revoked ? 0 : p.js.delivered ?? 0;
      const offsets = Array.from({ length: o.n }, (_, i) => floor + o.startGap + i);
      p.register(offsets, floor + o.startGap + o.n);
      break;
    }
    case "complete": {
      const [a, b] = handlePair(c, o.h);
      p.complete(a, b);
      break;
    }
    case "completeMany": {
      const pairs = o.hs.map((h) => handlePair(c, h));
      p.completeMany(pairs.map((x) => x[0]), pairs.map((x) => x[1]), o.typed);
      break;
    }
    case "completeRun": {
      const n = p.offsets.length;
      if (n === 0) break;
      const from = o.fromHead ? Math.min(n - 1, headIndex(p) + (o.from % 70)) : o.from % n;
      const to = Math.min(n, from + o.len);
      const rels = shuffle(Array.from({ length: to - from }, (_, i) => from + i), rng(o.seed));
      if (o.via === "complete") {
        for (const r of rels) p.completeRel(r);
      } else if (o.via === "descending") {
        // the run's first record last: one long prefix advance that must stop exactly at the run's end
        for (let r = to - 1; r >= from; r--) p.completeRel(r);
      } else if (o.via === "many") {
        p.completeMany(rels.map((r) => p.handles(r)[0]), rels.map((r) => p.handles(r)[1]), true);
      } else {
        for (const r of rels) p.completeOffset(p.offsets[r]);
      }
      break;
    }
    case "completeOffset":
      p.completeOffset(offsetFor(c, o.kind, o.pick, o.shift) as OffsetInput);
      break;
    case "revoke":
      p.revoke();
      break;
    case "tick":
      c.now.ms += o.ms;
      break;
  }
}

describe("WASM engine agrees with the JS engine", () => {
  test("generated operation sequences: every result, error, position and stat", () => {
    fc.assert(
      fc.property(start, capacity, fc.array(op, { minLength: 20, maxLength: 160 }), (s, cap, ops) => {
        const now = { ms: 1_000 };
        const clock = () => now.ms;
        const stale = new Pair({ start: 0, clock });
        stale.register([0, 1, 2, 5], 6);
        stale.completeRel(1);
        stale.revoke();
        const foreign = new Pair({ start: 0, clock });
        foreign.register([0, 1, 2, 3], 4);
        const pair = new Pair({ start: s, capacity: cap, clock });
        const c: Context = { pair, stale, foreign, now };
        try {
          pair.check("fresh");
          for (let i = 0; i < ops.length; i++) {
            apply(c, ops[i]);
            pair.check(`after op ${i}: ${JSON.stringify(ops[i])}`);
          }
        } finally {
          pair.revoke();
          foreign.revoke();
        }
      }),
      { numRuns: 400 },
    );
  });

  test("200,000 records with gaps, completed in random order by handle, by offset and in batches", () => {
    const rand = rng(2024);
    const now = { ms: 0 };
    const p = new Pair({ start: 10, clock: () => now.ms });
    let cur = 10;
    const total = 200_000;
    while (p.offsets.length < total) {
      const size = 1 + rand(5000);
      const batch: number[] = [];
      for (let i = 0; i < size && p.offsets.length + batch.length < total; i++) {
        batch.push(cur);
        const r = rand(100);
        cur += r < 90 ? 1 : r < 98 ? 2 + rand(3) : 1000 + rand(1_000_000);
      }
      p.register(batch, cur + rand(3));
      cur = p.js.delivered!;
      now.ms += 7;
    }
    p.check("registered");
    const order = shuffle(Array.from({ length: total }, (_, i) => i), rand);
    for (let i = 0; i < total;) {
      const how = rand(3);
      if (how === 0) {
        p.completeRel(order[i++]);
      } else if (how === 1) {
        p.completeOffset(p.offsets[order[i++]]);
      } else {
        const n = Math.min(total - i, 1 + rand(2000));
        const rels = order.slice(i, i + n);
        // with duplicates and strays mixed in
        rels.push(order[rand(i + n)], total + 3, -1);
        p.completeMany(rels.map((r) => p.handles(r)[0]), rels.map((r) => p.handles(r)[1]), rand(2) === 0);
        i += n;
      }
      if (rand(500) === 0) {
        now.ms += 1;
        p.check(`after ${i} completions`);
      }
    }
    p.check("all completed");
    assert.equal(p.wasm.safe, p.js.delivered);
    assert.equal(p.wasm.stats().retained, 0);
    p.revoke();
  });

  test("ring growth across wrap-around, with a slow head", () => {
    const rand = rng(77);
    const p = new Pair({ start: 0, clock: () => 0 });
    let next = 0;
    let slow = -1; // a relative handle left unfinished for a while
    for (let round = 0; round < 40; round++) {
      const size = 1 + rand(round < 20 ? 700 : 9000);
      const offsets = Array.from({ length: size }, (_, i) => next + i * (1 + (rand(10) === 0 ? 2 : 0)));
      const first = p.offsets.length;
      p.register(offsets, offsets[size - 1] + 1);
      next = offsets[size - 1] + 1;
      if (slow < 0) slow = first;
      // finish most of what is open, in random order, except the slow head
      const open: number[] = [];
      for (let r = first; r < p.offsets.length; r++) if (r !== slow) open.push(r);
      shuffle(open, rand);
      for (const r of open.slice(0, Math.floor(open.length * 0.9))) p.completeRel(r);
      if (round % 3 === 2) {
        p.completeRel(slow);
        slow = -1;
        // and the leftovers so that the head wraps round the ring
        for (let r = first; r < p.offsets.length; r++) p.completeRel(r);
      }
      p.check(`round ${round}`);
    }
    p.revoke();
  });

  test("the prefix advance stops exactly at the first unfinished record (word and summary boundaries, wrapped rings)", () => {
    const stops = [1, 2, 63, 64, 65, 127, 128, 511, 512, 513, 4095, 4096, 4097, 4160, 8191, 8192, 8193, 12_345];
    for (const shift of [0, 1, 300, 4000]) {
      for (const size of [600, 9000, 20_000]) {
        const p = new Pair({ start: 0, clock: () => 0 });
        // move the head `shift` records into the ring first, so later batches wrap round its end
        if (shift > 0) {
          p.register(Array.from({ length: shift }, (_, i) => i), shift);
          p.completeMany(Array.from({ length: shift }, (_, i) => p.handles(i)[0]), Array.from({ length: shift }, (_, i) => p.handles(i)[1]), true);
        }
        const first = p.offsets.length;
        p.register(Array.from({ length: size }, (_, i) => shift + i), shift + size);
        let head = first;
        for (const stop of stops) {
          const end = first + stop;
          if (end >= first + size) break;
          for (let r = end - 1; r > head; r--) p.completeRel(r);
          assert.equal(p.completeRel(head), 3);
          p.check(`shift ${shift}, size ${size}, stop ${stop}`);
          assert.equal(p.wasm.safe, shift + stop);
          head = end;
        }
        p.revoke();
      }
    }
  });

  test("ring growth re-lays completed records that sit behind an unaligned head", () => {
    for (const head of [1, 9, 31, 63, 64, 65, 100, 511]) {
      for (const grow of [1, 600, 5000]) {
        const p = new Pair({ start: 0, clock: () => 0 });
        const n = 512;
        p.register(Array.from({ length: n }, (_, i) => i), n);
        for (let r = 0; r < head; r++) p.completeRel(r);
        for (let r = head + 1; r < n; r += 1 + (r % 3)) p.completeRel(r); // an irregular pattern
        p.register(Array.from({ length: grow }, (_, i) => n + 7 + i), n + 7 + grow);
        p.check(`head ${head}, grown by ${grow}`);
        for (let r = head; r < n + grow; r++) p.completeRel(r);
        p.check(`head ${head}, grown by ${grow}, all completed`);
        assert.equal(p.wasm.safe, n + 7 + grow);
        p.revoke();
      }
    }
  });

  test("ring growth in place and by copy, with the retained range wrapping round the ring's end", () => {
    const rand = rng(31);
    let store: EngineTracker | undefined; // the engine tracker behind the latest pair's WASM tracker
    const capture: Engine = {
      kind: "wasm",
      open: (base, start, capacity) => (store = loadWasmEngine().open(base, start, capacity)),
    };
    // One batch of the largest size first: later batches fit the scratch area, so no
    // allocation but the ring's comes between a ring's growth and the next.
    const scratch = new Tracker({ start: 0, engine: "wasm" });
    scratch.register(Array.from({ length: 65_536 }, (_, i) => i), 65_536);
    scratch.revoke();
    // Rings of 2^19 bits and more are large blocks (whole 4 KiB units), extended in place
    // when free memory or the top of the memory follows them. So that the pair's ring of
    // 2^19 bits lands at the top, WASM trackers holding such rings plug the free extents
    // that could take one, until a plug's ring had to grow the memory (kept till the end).
    const plugs: Tracker[] = [];
    const plugHoles = () => {
      for (;;) {
        const plug = new Tracker({ start: 0, capacity: 1 << 22, engine: "wasm" });
        plugs.push(plug);
        for (let n = 0; n < 1 << 18; n += 65_536) plug.register(Array.from({ length: 65_536 }, (_, i) => n + i), n + 65_536);
        const before = wasmMemoryBytes();
        plug.register([1 << 18], (1 << 18) + 1); // the ring doubles to 2^19 bits: its only allocation
        if (wasmMemoryBytes() > before) return;
      }
    };
    // [ring size, head when it grows, records retained then, records it grows by]: the
    // retained range crosses the ring's end, in two segments that move by 0, 1 or 2 ring
    // sizes.
    const cases: [number, number, number, number][] = [
      [512, 300, 400, 3000], // to 4096 bits: the segment after the end moves up 512
      [512, 812, 388, 3000], // to 4096 bits: both segments move (512 and 1024)
      [512, 1836, 500, 100], // to 1024 bits: the segment before the end moves up 512
      [1 << 19, 300_000, 500_000, 65_536], // in place: the segment after the end moves
      [1 << 19, 800_000, 500_000, 30_000], // in place: the segment before the end moves
    ];
    for (const [size, head, retained, grow] of cases) {
      const label = `ring ${size}, head ${head}, retained ${retained}, grown by ${grow}`;
      if (size >= 1 << 19) plugHoles();
      const p = new Pair({ start: 0, capacity: 1 << 22, clock: () => 0 }, capture);
      const wasm = store!;
      const registerUpTo = (end: number) => {
        for (let n = p.offsets.length; n < end;) {
          const k = Math.min(end - n, 65_536);
          p.register(Array.from({ length: k }, (_, i) => n + i), n + k);
          n += k;
        }
      };
      const completeAll = (rels: number[]) =>
        p.completeMany(rels.map((r) => p.handles(r)[0]), rels.map((r) => p.handles(r)[1]), true);
      // move the head to `head` while at most `size` records are retained: the ring keeps its size
      for (let h = 0; h < head;) {
        registerUpTo(Math.min(h + size, head + retained));
        const to = Math.min(p.offsets.length, head);
        completeAll(Array.from({ length: to - h }, (_, i) => h + i));
        h = to;
      }
      registerUpTo(head + retained);
      const done = new Set<number>();
      for (let r = head + 1; r < head + retained; r += 1 + (r % 5) + (r % 64 === 0 ? 70 : 0)) done.add(r);
      completeAll([...done]);
      p.check(`${label}: before`);
      assert.equal(p.wasm.stats().retained, retained);
      const at = wasmRingAddress(wasm);
      registerUpTo(head + retained + grow);
      p.check(`${label}: grown`);
      if (size >= 1 << 19) assert.equal(wasmRingAddress(wasm), at, `${label}: grown in place`);
      const rest = shuffle(
        Array.from({ length: retained + grow }, (_, i) => head + i).filter((r) => !done.has(r)),
        rand,
      );
      for (let i = 0; i < rest.length;) {
        const k = 1 + rand(5000);
        p.completeRel(rest[i]);
        completeAll(rest.slice(i + 1, i + k));
        i += k;
      }
      p.check(`${label}: all completed`);
      assert.equal(p.wasm.safe, head + retained + grow);
      p.revoke();
    }
    for (const plug of plugs) plug.revoke();
  });

  test("batches of every size registered over the stale bits of a wrapped ring", () => {
    const rand = rng(5);
    const p = new Pair({ start: 0, capacity: 512, clock: () => 0 }); // the ring stays at 512 bits and wraps
    let next = 0;
    for (let size = 1; size <= 300; size++) {
      const first = p.offsets.length;
      p.register(Array.from({ length: size }, (_, i) => next + i), next + size);
      next += size;
      for (const r of shuffle(Array.from({ length: size }, (_, i) => first + i), rand)) p.completeRel(r);
      p.check(`batch of ${size}`);
    }
    p.revoke();
  });

  test("completion in shuffled whole words and summary blocks (the summary level's skips)", () => {
    const rand = rng(99);
    for (const block of [64, 128, 4096]) {
      const n = 300_000;
      const p = new Pair({ start: 0, clock: () => 0 });
      p.register(Array.from({ length: n }, (_, i) => i), n);
      const blocks = shuffle(Array.from({ length: Math.ceil(n / block) }, (_, i) => i), rand);
      const [jsFirst, wasmFirst] = p.handles(0);
      for (const b of blocks) {
        const rels = shuffle(Array.from({ length: Math.min(block, n - b * block) }, (_, i) => b * block + i), rand);
        if (rand(3) === 0) {
          p.completeMany(rels.map((r) => jsFirst + r), rels.map((r) => wasmFirst + r), true);
          assert.equal(p.wasm.safe, p.js.safe);
          continue;
        }
        for (const r of rels) {
          const a = p.js.complete(jsFirst + r), w = p.wasm.complete(wasmFirst + r);
          if (a !== w) assert.equal(w, a, `complete(${r}) with blocks of ${block}`);
          if (a === 3 && p.wasm.safe !== p.js.safe) assert.equal(p.wasm.safe, p.js.safe, `safe after ${r}`);
        }
      }
      p.check(`blocks of ${block}`);
      assert.equal(p.wasm.safe, n);
      p.revoke();
    }
  });

  test("1,000,000 finished records behind a slow head", () => {
    const n = 1_000_001;
    const p = new Pair({ start: 5, clock: () => 0 });
    const offsets = new Array<number>(n);
    for (let i = 0; i < n; i++) offsets[i] = 5 + i + (i >= 500_000 ? 3 : 0); // one gap in the middle
    p.register(offsets, offsets[n - 1] + 2);
    const rels = Array.from({ length: n - 1 }, (_, i) => i + 1);
    assert.equal(p.completeMany(rels.map((r) => p.handles(r)[0]), rels.map((r) => p.handles(r)[1]), true), n - 1);
    p.check("all but the head");
    assert.equal(p.wasm.stats().blocked, n - 1);
    assert.equal(p.wasm.safe, 5);
    assert.deepEqual(p.completeOffset(offsets[n - 1]), { ok: 1 }); // Duplicate
    assert.deepEqual(p.completeOffset(5), { ok: 3 }); // Advanced past 1,000,000 records
    p.check("head finished");
    assert.equal(p.wasm.safe, offsets[n - 1] + 2);
    assert.deepEqual(p.completeOffset(500_005), { ok: 1 }); // in the gap, below safe: Duplicate
    assert.deepEqual(p.completeOffset(4), { ok: 0 }); // before the first delivered offset
    p.revoke();
  });

  test("offsets near 2^53 and the edges of the handle space", () => {
    const top = 2 ** 53 - 1;
    const p = new Pair({ start: top - 10, clock: () => 0 }); // a shared clock: ages compare exactly
    p.register([top - 10, top - 7, top - 2], top);
    p.register([], top);
    p.register([top], top + 1); // next is 2^53: InvalidOffsetError
    p.check("near the limit");
    for (const h of [2, 0, 1, 1, 3, -1, 0.5]) p.completeRel(h);
    p.completeOffset(top - 1);
    p.completeOffset(top - 11);
    p.completeOffset(String(top));
    p.completeOffset(2 ** 53);
    p.check("completed");
    p.revoke();
    p.check("revoked");
    p.completeRel(0);
    p.register([1], 2);
    p.completeOffset(top - 10);
    assert.equal(p.completeMany([p.jsFirst!], [p.wasmFirst!], false), 0);
  });
});
