/**
 * `Tracker.unfinishedRuns`: both engines return the same pairs, and the pairs agree with
 * the plain per-record model (test/unit/model.ts) and with the rule checked offset by
 * offset: every pending record lies in exactly one pair, no completed record and no
 * offset that was never delivered lies in any, pairs are sorted, disjoint, maximal and
 * split at gaps, and a smaller `maxRuns` gives a prefix.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError, RevokedError, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";
import { Model } from "./model.ts";
import { permutations, rng, shuffle } from "./random.ts";

/** All pairs of `t` (maxRuns large enough for everything), flattened. */
function runsOf(t: Tracker, maxRuns = t.stats().pending + 1): number[] {
  const out = new Float64Array(2 * maxRuns);
  const n = t.unfinishedRuns(out, maxRuns);
  assert.ok(Number.isInteger(n) && n >= 0 && n <= maxRuns, `n = ${n} for maxRuns = ${maxRuns}`);
  return Array.from(out.subarray(0, 2 * n));
}

/**
 * The rule, checked offset by offset against the registered offsets and their states
 * (without computing the pairs): covered offsets are exactly the pending ones, each once;
 * pairs sorted and disjoint; each pair maximal (the offsets just before and just after it
 * are not pending records).
 */
function checkRule(pairs: readonly number[], offsets: readonly number[], done: readonly boolean[], label: string): void {
  const pendingAt = new Map<number, boolean>(); // delivered offset → pending
  for (let i = 0; i < offsets.length; i++) pendingAt.set(offsets[i], !done[i]);
  let pending = 0;
  for (const d of done) if (!d) pending++;
  let covered = 0;
  let prevEnd = -Infinity;
  for (let k = 0; k < pairs.length; k += 2) {
    const s = pairs[k], len = pairs[k + 1];
    assert.ok(Number.isSafeInteger(s) && Number.isSafeInteger(len) && len >= 1, `${label}: pair ${k / 2} = (${s}, ${len})`);
    assert.ok(s > prevEnd, `${label}: pair ${k / 2} starts at ${s}, not past the previous pair's end ${prevEnd}`);
    assert.notEqual(pendingAt.get(s - 1), true, `${label}: pair ${k / 2} could start earlier (${s - 1} is pending)`);
    assert.notEqual(pendingAt.get(s + len), true, `${label}: pair ${k / 2} could end later (${s + len} is pending)`);
    for (let o = s; o < s + len; o++) {
      assert.equal(pendingAt.get(o), true, `${label}: offset ${o} in pair ${k / 2} is ${pendingAt.has(o) ? "completed" : "not delivered"}`);
    }
    covered += len;
    prevEnd = s + len;
  }
  assert.equal(covered, pending, `${label}: the pairs cover ${covered} records, ${pending} are pending`);
}

/** Checks one tracker against the model: the full answer, the rule, the safe position, and every truncation in `cuts`. */
function checkTracker(t: Tracker, m: Model, label: string, cuts: readonly number[]): number[] {
  const expected = m.unfinishedRuns();
  const all = runsOf(t);
  assert.deepEqual(all, expected, `${label} (${t.engine})`);
  if (all.length > 0) assert.equal(all[0], t.safe, `${label} (${t.engine}): the first pair starts at the safe position`);
  for (const k of cuts) {
    assert.deepEqual(runsOf(t, k), expected.slice(0, 2 * k), `${label} (${t.engine}): maxRuns ${k}`);
  }
  return all;
}

/** The same operations on a JS tracker, a WASM tracker and the model. */
class Trio {
  readonly trackers: Tracker[];
  readonly firsts: number[] = [];
  readonly model: Model;

  constructor(start: number, capacity = 16_777_216) {
    this.trackers = ENGINES.map((engine) => new Tracker({ start, capacity, engine }));
    this.model = new Model(start, capacity);
  }

  register(offsets: readonly number[], next: number): void {
    const rel = this.model.register(offsets, next);
    assert.equal(typeof rel, "number", `the model takes the batch (${String(rel)})`);
    this.trackers.forEach((t, i) => {
      const h = t.register(Float64Array.from(offsets), next);
      this.firsts[i] ??= h;
      assert.equal(h - this.firsts[i], rel);
    });
  }

  /** Completes the records of relative handles `rels`: per call, in one batch, or by offset. */
  complete(rels: readonly number[], via: "handle" | "many" | "offset" = "handle"): void {
    const done = this.model.done; // set directly: Model.complete costs O(records) per call
    for (const r of rels) {
      assert.ok(Number.isInteger(r) && r >= 0 && r < done.length, `relative handle ${r}`);
      done[r] = true;
    }
    this.trackers.forEach((t, i) => {
      if (via === "many") t.completeMany(Float64Array.from(rels, (r) => this.firsts[i] + r));
      else if (via === "offset") for (const r of rels) t.completeOffset(this.model.offsets[r]);
      else for (const r of rels) t.complete(this.firsts[i] + r);
    });
  }

  get size(): number {
    return this.model.offsets.length;
  }

  /** Both engines against the model and the rule; returns the pairs. */
  check(label: string, cuts: readonly number[] = []): number[] {
    const [js, wasm] = this.trackers.map((t) => checkTracker(t, this.model, label, cuts));
    assert.deepEqual(wasm, js, `${label}: the engines agree`);
    checkRule(js, this.model.offsets, this.model.done, label);
    return js;
  }

  revoke(): void {
    for (const t of this.trackers) t.revoke();
  }
}


/** Registers `shift` dense records from `start` and completes them: the head sits `shift` records into the ring. */
function shifted(shift: number, start: number, capacity?: number): Trio {
  const p = new Trio(start, capacity);
  for (let done = 0; done < shift;) { // in batches of 256, so that small capacities keep small rings
    const k = Math.min(256, shift - done);
    p.register(Array.from({ length: k }, (_, i) => start + done + i), start + done + k);
    p.complete(Array.from({ length: k }, (_, i) => done + i), "many");
    done += k;
  }
  return p;
}

// ---------------------------------------------------------------- generated operation sequences

type Op =
  | { k: "register"; startGap: number; gaps: number[]; tail: number }
  | { k: "dense"; startGap: number; n: number }
  | { k: "complete"; picks: number[]; via: "handle" | "many" | "offset" }
  | { k: "fromHead"; skip: number; len: number; keep: number; seed: number }
  | { k: "head" };

const gap = fc.oneof(
  { weight: 20, arbitrary: fc.constant(1) },
  { weight: 5, arbitrary: fc.integer({ min: 2, max: 3 }) },
  { weight: 2, arbitrary: fc.integer({ min: 4, max: 100_000 }) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("register" as const),
      startGap: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 1000 }) }),
      gaps: fc.array(gap, { maxLength: 200 }),
      tail: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("dense" as const), startGap: fc.integer({ min: 0, max: 2 }), n: fc.integer({ min: 1, max: 6000 }) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("complete" as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 300 }),
      via: fc.constantFrom("handle" as const, "many" as const, "offset" as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("fromHead" as const),
      skip: fc.integer({ min: 0, max: 3 }),
      len: fc.integer({ min: 1, max: 5000 }),
      keep: fc.integer({ min: 0, max: 8 }), // records left pending among those
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "head" as const }) },
);

function applyOp(p: Trio, o: Op): void {
  const m = p.model;
  const n = p.size;
  switch (o.k) {
    case "register": {
      let cur = (m.next ?? 0) + o.startGap;
      const offsets = [cur];
      for (const d of o.gaps) offsets.push((cur += d));
      p.register(offsets, cur + o.tail);
      break;
    }
    case "dense": {
      const from = (m.next ?? 0) + o.startGap;
      p.register(Array.from({ length: o.n }, (_, i) => from + i), from + o.n);
      break;
    }
    case "complete":
      if (n > 0) p.complete([...new Set(o.picks.map((x) => x % n))], o.via);
      break;
    case "fromHead": {
      // a stretch from near the head, in a random order, leaving `keep` of it pending: moves
      // the head forward (the ring wraps) and leaves slow records behind it
      const from = Math.min(n, m.head() + o.skip), to = Math.min(n, from + o.len);
      const rand = rng(o.seed);
      const rels = shuffle(Array.from({ length: to - from }, (_, i) => from + i), rand).slice(o.keep);
      p.complete(rels, rand(2) === 0 ? "many" : "handle");
      break;
    }
    case "head":
      if (m.head() < n) p.complete([m.head()]);
      break;
  }
}

describe("unfinishedRuns: both engines, the model and the rule", () => {
  test("generated operation sequences (gaps, random completion, ring growth and wrap-around, slow heads)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.array(op, { minLength: 5, maxLength: 60 }), (start, ops) => {
        const p = new Trio(start);
        try {
          p.check("fresh");
          for (let i = 0; i < ops.length; i++) {
            applyOp(p, ops[i]);
            const runs = p.model.unfinishedRuns().length / 2;
            p.check(`after op ${i} (${ops[i].k})`, [0, 1, (i * 7919) % (runs + 1), Math.max(0, runs - 1)]);
          }
        } finally {
          p.revoke();
        }
      }),
      { numRuns: 150 },
    );
  });

  test("exhaustive: every completion order of 6 records with gaps, every truncation, head across the ring's end", () => {
    const OFFSETS = [10, 11, 13, 14, 15, 17]; // 12 and 16 were never delivered
    // shift 510 and 1022 put the six records across the end of a 512-bit (WASM) and a
    // 1,024-bit (JS) ring; a capacity of 512 keeps the rings at those sizes
    for (const shift of [0, 510, 1022]) {
      for (const split of [false, true]) {
        let orders = 0;
        for (const order of permutations(OFFSETS.length)) {
          const base = 1_000_000;
          const p = shifted(shift, base - shift, 512);
          const offsets = OFFSETS.map((o) => base + o);
          if (split) {
            p.register(offsets.slice(0, 3), base + 14);
            p.register(offsets.slice(3), base + 20);
          } else {
            p.register(offsets, base + 20);
          }
          const cuts = [0, 1, 2, 3, 4];
          p.check(`shift ${shift}: nothing completed`, cuts);
          for (let j = 0; j < order.length; j++) {
            p.complete([shift + order[j]], j % 2 === 0 ? "handle" : "offset");
            p.check(`shift ${shift}, split ${split}, order ${order}: ${j + 1} completed`, cuts);
          }
          assert.equal(p.check("all completed").length, 0);
          p.revoke();
          orders++;
        }
        assert.equal(orders, 720);
      }
    }
  });

  test("exhaustive: every set of completed records among 12 with gaps (4,096 sets)", () => {
    const OFFSETS = [0, 1, 2, 4, 5, 6, 7, 9, 20, 21, 22, 23];
    for (let set = 0; set < 1 << OFFSETS.length; set++) {
      const p = new Trio(0);
      p.register(OFFSETS, 30);
      const rels = OFFSETS.map((_, i) => i).filter((i) => (set >> i) & 1);
      p.complete(rels, set % 3 === 0 ? "many" : "handle");
      p.check(`completed set ${set.toString(2)}`, [1, 3]);
      p.revoke();
    }
  });

  test("pending stretches at word and summary boundaries (32, 64, 1,024, 4,096 records), wrapped rings", () => {
    const LENGTHS = [1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 1023, 1024, 1025, 4095, 4096, 4097, 4160, 9000];
    const rand = rng(4242);
    for (const shift of [0, 1, 63, 300, 4000, 13_000]) {
      const n = 40_000;
      const p = shifted(shift, 7, 1 << 16);
      p.register(Array.from({ length: n }, (_, i) => 7 + shift + i + (i >= 20_000 ? 5 : 0)), 7 + shift + n + 5);
      // pending: the head, then stretches of the lengths above at aligned starts ± 1, the
      // completed stretches between them of the same lengths
      const pending = new Set<number>([0]);
      let at = 1;
      for (const len of shuffle(LENGTHS.slice(), rand)) {
        const gapLen = LENGTHS[rand(LENGTHS.length)];
        at += gapLen;
        const aligned = Math.ceil(at / 64) * 64 + (rand(3) - 1);
        for (let i = aligned; i < aligned + len && i < n; i++) pending.add(i);
        at = aligned + len;
      }
      const rels: number[] = [];
      for (let i = 0; i < n; i++) if (!pending.has(i)) rels.push(shift + i);
      p.complete(rels, "many");
      p.check(`shift ${shift}`, [1, 7]);
      p.complete([shift]); // the head: the rest starts at the first stretch
      p.check(`shift ${shift}, head completed`, [1, 7]);
      p.revoke();
    }
  });

  test("a slow head behind 1,000,000 completed records with gaps, and scattered pending records", () => {
    const n = 1_000_000;
    const offsets = new Array<number>(n);
    for (let i = 0, o = 100; i < n; i++, o += i % 1000 === 0 ? 3 : 1) offsets[i] = o; // a gap every 1,000
    const p = new Trio(100);
    p.register(offsets, offsets[n - 1] + 1);
    const rand = rng(8);
    const pending = new Set<number>([0]);
    while (pending.size < 2000) pending.add(rand(n));
    const rels: number[] = [];
    for (let i = 1; i < n; i++) if (!pending.has(i)) rels.push(i);
    p.complete(rels, "many");
    const runs = p.check("2,000 pending among 1,000,000", [1, 1000]);
    assert.equal(runs.length / 2 >= 1000, true);
    p.complete([...pending].filter((i) => i !== 0), "many");
    assert.deepEqual(p.check("only the slow head pending"), [100, 1]);
    p.complete([0]);
    assert.deepEqual(p.check("all completed"), []);
    p.revoke();
  });

  test("a ring of 512 records wrapping round over and over (capacity 512)", () => {
    const rand = rng(17);
    const p = new Trio(0, 512);
    let next = 0;
    const open: number[] = [];
    for (let round = 0; round < 300; round++) {
      const size = 1 + rand(Math.min(200, 512 - (p.size - p.model.head())));
      const offsets: number[] = [];
      for (let i = 0; i < size; i++) offsets.push((next += rand(4) === 0 ? 2 : 1));
      next++;
      const first = p.size;
      p.register(offsets, next);
      for (let i = 0; i < size; i++) open.push(first + i);
      shuffle(open, rand);
      const k = Math.floor(open.length * (0.3 + rand(60) / 100));
      p.complete(open.splice(0, k), round % 2 === 0 ? "handle" : "many");
      if (p.size - p.model.head() > 400) p.complete(open.splice(0, open.length)); // room for the next batch
      p.check(`round ${round}`, [1, 2]);
    }
    p.revoke();
  });

  test("more pairs than one WASM call writes (32,768): 60,000 single pending records", () => {
    const n = 120_001;
    const p = new Trio(0);
    p.register(Array.from({ length: n }, (_, i) => i), n);
    p.complete(Array.from({ length: (n - 1) / 2 }, (_, i) => 2 * i + 1), "many"); // every odd record
    const all = p.check("alternating", [32_767, 32_768, 32_769, 60_000]);
    assert.equal(all.length, 2 * 60_001);
    // the scratch area grew (and maybe the memory with it): per-call completion still agrees
    p.complete([0, 2, 4, 100_000]);
    p.check("after more completions", [3]);
    p.revoke();
  });

  test("more pairs than one WASM call writes, inside one pending stretch: 70,000 records, a gap after each", () => {
    const n = 70_000;
    const p = new Trio(0);
    p.register(Array.from({ length: n }, (_, i) => 2 * i), 2 * n); // every record its own run
    assert.equal(p.check("all pending", [32_768, 32_769, 65_536, 69_999]).length, 2 * n);
    p.complete([1, 40_000, 69_999]);
    assert.equal(p.check("three completed", [32_768, 65_537]).length, 2 * (n - 3));
    p.revoke();
  });
});

describe("unfinishedRuns: arguments", () => {
  for (const engine of ENGINES) {
    test(`bad out or maxRuns: InvalidArgumentError naming the value (${engine})`, () => {
      const t = new Tracker({ start: 0, engine });
      t.register([0, 1, 3], 4);
      const bad: [unknown, unknown, RegExp][] = [
        [[0, 0], 1, /out must be a Float64Array; got an object \(\[object Array\]\)/],
        [new Float32Array(2), 1, /out must be a Float64Array; got an object \(\[object Float32Array\]\)/],
        [null, 1, /out must be a Float64Array; got null/],
        [new Float64Array(4), -1, /maxRuns must be an integer ≥ 0; got -1/],
        [new Float64Array(4), 1.5, /maxRuns must be an integer ≥ 0; got 1.5/],
        [new Float64Array(4), NaN, /maxRuns must be an integer ≥ 0; got NaN/],
        [new Float64Array(4), "2", /maxRuns must be an integer ≥ 0; got "2"/],
        [new Float64Array(4), 2n, /maxRuns must be an integer ≥ 0; got 2n/],
        [new Float64Array(3), 2, /2 · maxRuns = 4 .* length 3/],
      ];
      for (const [out, max, message] of bad) {
        assert.throws(() => t.unfinishedRuns(out as Float64Array, max as number), (e: unknown) => {
          assert.ok(e instanceof InvalidArgumentError);
          assert.match(e.message, message);
          return true;
        });
      }
      const out = new Float64Array(6).fill(-7);
      assert.equal(t.unfinishedRuns(out, 0), 0);
      assert.deepEqual([...out], [-7, -7, -7, -7, -7, -7], "maxRuns 0 writes nothing");
      assert.equal(t.unfinishedRuns(out, 3), 2);
      assert.deepEqual([...out], [0, 2, 3, 1, -7, -7], "only 2·n numbers are written");
      assert.equal(t.unfinishedRuns(new Float64Array(100), 2), 2, "out may be longer");
      t.revoke();
      assert.throws(() => t.unfinishedRuns(out, 1), RevokedError);
    });

    test(`nothing registered, nothing pending, empty batches (${engine})`, () => {
      const out = new Float64Array(4);
      const fresh = new Tracker({ engine });
      assert.equal(fresh.unfinishedRuns(out, 2), 0);
      fresh.register([], 5);
      assert.equal(fresh.unfinishedRuns(out, 2), 0);
      const h = fresh.register([5, 6], 9);
      fresh.register([], 12);
      assert.equal(fresh.unfinishedRuns(out, 2), 1);
      assert.deepEqual([...out.subarray(0, 2)], [5, 2]);
      fresh.register([12], 13); // after an empty batch that moved `next`: a gap before 12
      assert.equal(fresh.unfinishedRuns(out, 2), 2);
      assert.deepEqual([...out], [5, 2, 12, 1]);
      fresh.completeMany([h, h + 1, h + 2]);
      assert.equal(fresh.unfinishedRuns(out, 2), 0);
      fresh.revoke();
    });
  }
});
