import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type CompletedSet,
  decodeCompletedSet,
  encodeCompletedSet,
  InvalidArgumentError,
  MAX_METADATA_LENGTH,
  type RunsInput,
} from "../../core/tracker/mod.ts";
import { ALPHA, bin, specString, T } from "./completed_set_spec.ts";

// ---- an independent model: the set of unfinished offsets of [base, end) ----------------------

/** A history: [base, end) where every offset is finished except those in `unfinished`. */
interface History {
  base: number;
  end: number;
  unfinished: Set<number>;
  /** the input handed to the encoder (runs possibly split into touching pieces) */
  input: RunsInput;
  /** one past the last finished offset (base if none) */
  lastFinishedEnd: number;
}

type Segment = { finished: boolean; length: number };

function history(base: number, segments: Segment[], splitTouching: boolean): History {
  const unfinished = new Set<number>();
  const runs: number[] = [];
  let at = base, lastFinishedEnd = base;
  for (const s of segments) {
    if (s.finished) lastFinishedEnd = at + s.length;
    else {
      for (let o = at; o < at + s.length; o++) unfinished.add(o);
      if (splitTouching && s.length > 1) {
        const h = s.length >> 1;
        runs.push(at, h, at + h, s.length - h);
      } else runs.push(at, s.length);
    }
    at += s.length;
  }
  return { base, end: at, unfinished, input: { base, end: at, runs: Float64Array.from(runs), count: runs.length / 2 }, lastFinishedEnd };
}

const finishedModel = (h: History, o: number): boolean => o >= h.base && o < h.end && !h.unfinished.has(o);

/** Segments alternate; lengths from small to large gaps (finished only: compaction). */
const segments = (maxGap: number): fc.Arbitrary<Segment[]> =>
  fc.tuple(
    fc.boolean(),
    fc.array(
      fc.tuple(
        fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 300 }) }, {
          weight: 1,
          arbitrary: fc.integer({ min: 1, max: maxGap }),
        }),
        fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }) }),
      ),
      { maxLength: 120 },
    ),
  ).map(([firstFinished, pairs]) => {
    const out: Segment[] = [];
    for (const [f, u] of pairs) {
      if (firstFinished) out.push({ finished: true, length: f }, { finished: false, length: u });
      else out.push({ finished: false, length: u }, { finished: true, length: f });
    }
    return out;
  });

const base = fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 2 ** 53 - 2 ** 31 }));
const budget = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 41, max: 600 }) },
  { weight: 3, arbitrary: fc.integer({ min: 601, max: 5000 }) },
);
const historyArb = fc.tuple(base, segments(2 ** 30), fc.boolean()).filter(([b, s]) => b + s.reduce((a, x) => a + x.length, 0) <= 2 ** 53).map(
  ([b, s, split]) => history(b, s, split),
);

/** Checks a decoded claim against the model: only finished offsets, all of them below its end. */
function checkClaim(h: History, set: CompletedSet, end: number): void {
  assert.ok(end <= h.lastFinishedEnd, `end ${end} beyond the last finished offset ${h.lastFinishedEnd - 1}`);
  assert.equal(set.base, h.base);
  assert.equal(set.end, end);
  const inside = [...h.unfinished].filter((o) => o < end);
  for (const o of inside) assert.equal(set.isFinished(o), false, `claims unfinished ${o}`);
  for (const o of shuffled(inside)) assert.equal(set.isFinished(o), false, `claims unfinished ${o} (random order)`);
  assert.equal(set.isFinished(end), false, "claims its end");
  assert.equal(set.isFinished(h.base - 1), false, "claims below base");
  // only finished ones are claimed (above) and as many as the model has below end: all of them
  assert.equal(set.finishedCount(), end - h.base - inside.length);
  // spot checks of finished offsets, each segment's borders
  let at = h.base;
  for (let i = 0; i < h.input.count; i++) {
    const s = h.input.runs[2 * i], l = h.input.runs[2 * i + 1];
    for (const o of [at, s - 1, s + l]) if (o >= h.base && o < end) assert.equal(set.isFinished(o), finishedModel(h, o), `offset ${o}`);
    at = s + l;
  }
}

function shuffled<T>(xs: T[]): T[] {
  const a = [...xs];
  let s = 12345;
  for (let i = a.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

describe("completed-set codec", () => {
  test("worked example: a 10-offset bitmap is 7 characters, exactly as documented", () => {
    // 100 and 103..104 unfinished: bits 0110011111 (10 bits + 32-bit check = 42 ≤ T(7) = 43)
    const e = encodeCompletedSet("orders", 0, { base: 100, end: 110, runs: new Float64Array([100, 1, 103, 2]), count: 2 });
    assert.ok(e);
    assert.equal(e.format, "bitmap");
    assert.equal(e.end, 110);
    assert.equal(e.finished, 7);
    assert.equal(e.metadata, specString(1, "0110011111", "orders", 0, 100));
    assert.equal(e.metadata.length, 7);
  });

  test("worked example: a stuck head with 1,000,000 finished behind it is 11 characters", () => {
    // runs: flag 0, codes eg0 (000000) and rice19 (110011), U: v=0 → "1", F: v=999,999 → q=1: "01" + 19 low bits
    const e = encodeCompletedSet("orders", 3, { base: 5, end: 1_000_006, runs: new Float64Array([5, 1]), count: 1 });
    assert.ok(e);
    assert.equal(e.format, "runs:eg0/rice19");
    assert.equal(e.finished, 1_000_000);
    const payload = "0" + bin(0, 6) + bin(32 + 19, 6) + "1" + "01" + bin(999_999 - 2 ** 19, 19); // 35 bits
    assert.equal(e.metadata, specString(0, payload, "orders", 3, 5));
    assert.equal(e.metadata.length, 11);
  });

  test("worked example: over the budget, the longest prefix that fits (alternating offsets, 20 characters)", () => {
    // base+2i unfinished, base+2i+1 finished, i < 500. Budget 20: T(20) = 127 bits, 95 for the payload.
    // bitmap: [base, base+95), trimmed to base+94 (base+94 is unfinished): 47 finished; runs: 13 + 41·2 bits → only 41.
    const b = 2 ** 40;
    const runs = new Float64Array(1000);
    for (let i = 0; i < 500; i++) runs.set([b + 2 * i, 1], 2 * i);
    const e = encodeCompletedSet("t", 7, { base: b, end: b + 1000, runs, count: 500 }, { budget: 20 });
    assert.ok(e);
    assert.equal(e.format, "bitmap");
    assert.equal(e.end, b + 94);
    assert.equal(e.finished, 47);
    assert.equal(e.metadata, specString(1, "01".repeat(47), "t", 7, b));
    assert.equal(e.metadata.length, 20);
    const full = encodeCompletedSet("t", 7, { base: b, end: b + 1000, runs, count: 500 });
    assert.equal(full?.end, b + 1000);
    assert.equal(full?.metadata.length, 160, "the whole bitmap: 1,000 bits + check = 1,032 ≤ T(160) = 1,037");
    assert.ok(T(159) < 1032 && T(160) === 1037);
  });

  test("nothing finished, or nothing fits: undefined", () => {
    assert.equal(encodeCompletedSet("t", 0, { base: 10, end: 10, runs: new Float64Array(0), count: 0 }), undefined);
    assert.equal(encodeCompletedSet("t", 0, { base: 10, end: 15, runs: new Float64Array([10, 5]), count: 1 }), undefined);
    assert.equal(encodeCompletedSet("t", 0, { base: 10, end: 15, runs: new Float64Array([]), count: 0 }, { budget: 5 }), undefined, "5 characters hold 30 bits: no room for the checksum");
    const e = encodeCompletedSet("t", 0, { base: 10, end: 15, runs: new Float64Array([]), count: 0 }, { budget: 6 });
    assert.equal(e?.metadata.length, 6);
    assert.equal(e?.end, 14, "6 characters: 36 bits, 4 after the checksum");
  });

  test("bad input: typed errors naming the value", () => {
    const ok = { base: 10, end: 20, runs: new Float64Array([12, 2]), count: 1 };
    const bad: [string, () => unknown, RegExp][] = [
      ["base", () => encodeCompletedSet("t", 0, { ...ok, base: -1 }), /input\.base.*-1/],
      ["end", () => encodeCompletedSet("t", 0, { ...ok, end: 5 }), /input\.end.*5/],
      ["unsorted", () => encodeCompletedSet("t", 0, { ...ok, runs: new Float64Array([15, 1, 12, 1]), count: 2 }), /runs\[2\].*12/],
      ["overlap", () => encodeCompletedSet("t", 0, { ...ok, runs: new Float64Array([12, 3, 13, 1]), count: 2 }), /runs\[2\].*13/],
      ["zero length", () => encodeCompletedSet("t", 0, { ...ok, runs: new Float64Array([12, 0]) }), /runs\[1\].*0/],
      ["outside", () => encodeCompletedSet("t", 0, { ...ok, runs: new Float64Array([19, 2]) }), /runs\[1\].*2/],
      ["below base", () => encodeCompletedSet("t", 0, { ...ok, runs: new Float64Array([9, 2]) }), /runs\[0\].*9/],
      ["count", () => encodeCompletedSet("t", 0, { ...ok, count: 2 }), /count.*2/],
      ["partition", () => encodeCompletedSet("t", -1, ok), /partition.*-1/],
      ["budget", () => encodeCompletedSet("t", 0, ok, { budget: 0 }), /budget.*0/],
      ["budget too big", () => encodeCompletedSet("t", 0, ok, { budget: MAX_METADATA_LENGTH + 1 }), /budget/],
    ];
    for (const [name, f, message] of bad) assert.throws(f, (e: unknown) => e instanceof InvalidArgumentError && message.test(e.message), name);
  });

  test("round trip against the model: claims only finished offsets, all of them below end; within the budget", () => {
    fc.assert(
      fc.property(historyArb, budget, (h, b) => {
        const e = encodeCompletedSet("orders", 2, h.input, { budget: b });
        const full = encodeCompletedSet("orders", 2, h.input, { budget: MAX_METADATA_LENGTH });
        if (h.lastFinishedEnd === h.base) {
          assert.equal(e, undefined, "nothing finished");
          return;
        }
        assert.ok(full, "a few hundred runs always fit 65,536 characters");
        assert.equal(full.end, h.lastFinishedEnd, "the whole set: end = one past the last finished offset");
        if (e === undefined) {
          assert.ok(b < 12, `only a tiny budget keeps nothing (budget ${b})`);
          return;
        }
        assert.ok(e.metadata.length <= b, `length ${e.metadata.length} > budget ${b}`);
        assert.match(e.metadata, /^[!#-&(-[\]-~]+$/, "printable ASCII without quotes, backslash or space");
        if (full.metadata.length <= b) {
          assert.equal(e.end, h.lastFinishedEnd, "the whole set fits: nothing is cut");
          assert.equal(e.metadata.length, full.metadata.length);
        }
        const d = decodeCompletedSet("orders", 2, h.base, e.metadata);
        assert.ok(d.ok, d.ok ? "" : d.reason);
        assert.equal(e.finished, d.set.finishedCount());
        checkClaim(h, d.set, e.end);
      }),
      { numRuns: 300 },
    );
  });

  test("the smallest encoding wins: sizes match a brute force over every code and the bitmap", () => {
    const egLength = (v: number, k: number): number => {
      const n = (v + 2 ** k).toString(2).length;
      return n - 1 - k + n;
    };
    const riceLength = (v: number, k: number): number => Math.floor(v / 2 ** k) + 1 + k;
    const best = (values: number[]): number => {
      if (values.length === 0) return 0;
      let min = Infinity;
      for (let k = 0; k < 32; k++) {
        min = Math.min(min, values.reduce((a, v) => a + egLength(v, k), 0), values.reduce((a, v) => a + riceLength(v, k), 0));
      }
      return min;
    };
    fc.assert(
      fc.property(historyArb, (h) => {
        const e = encodeCompletedSet("t", 0, h.input, { budget: MAX_METADATA_LENGTH });
        if (h.lastFinishedEnd === h.base) return assert.equal(e, undefined);
        // the alternating runs of [base, lastFinishedEnd), from the model's offsets
        const u: number[] = [], f: number[] = [];
        let at = h.base;
        while (at < h.lastFinishedEnd) {
          const finished = finishedModel(h, at);
          let to = at + 1;
          if (finished) {
            // jump over finished stretches quickly: to the next unfinished offset or the end
            const next = [...h.unfinished].filter((o) => o > at).reduce((m, o) => Math.min(m, o), h.lastFinishedEnd);
            to = next;
          } else while (to < h.lastFinishedEnd && h.unfinished.has(to)) to++;
          (finished ? f : u).push(to - at - 1);
          at = to;
        }
        const runsBits = 13 + best(u) + best(f);
        const bitmapBits = h.lastFinishedEnd - h.base;
        let n = 1;
        while (T(n) < Math.min(runsBits, bitmapBits) + 32) n++;
        assert.ok(e);
        assert.equal(e.metadata.length, n, `runs ${runsBits} bits, bitmap ${bitmapBits} bits`);
        if (runsBits !== bitmapBits) assert.equal(e.format.startsWith("runs"), runsBits < bitmapBits, e.format);
      }),
      { numRuns: 150 },
    );
  });

  test("dense histories (a boolean array model), queries in order and at random", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 53 - 5000 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 3000 }), fc.integer({ min: 0, max: 100 }), (b, bits, bias) => {
        // bias skews the density so that both formats win sometimes
        const finished = bits.map((x, i) => x || (i * 7919) % 100 < bias);
        const segs: Segment[] = [];
        for (const f of finished) {
          const last = segs[segs.length - 1];
          if (last && last.finished === f) last.length++;
          else segs.push({ finished: f, length: 1 });
        }
        const h = history(b, segs, false);
        const e = encodeCompletedSet("dense", 0, h.input);
        if (h.lastFinishedEnd === h.base) return assert.equal(e, undefined);
        assert.ok(e && e.metadata.length <= 4096);
        const d = decodeCompletedSet("dense", 0, String(b), e.metadata);
        assert.ok(d.ok, d.ok ? "" : d.reason);
        for (let i = 0; i < finished.length; i++) assert.equal(d.set.isFinished(b + i), b + i < e.end && finished[i], `offset ${i}`);
        for (let k = 0; k < 200; k++) {
          const i = (k * 2654435761) % finished.length;
          assert.equal(d.set.isFinished(b + i), b + i < e.end && finished[i], `offset ${i} (random order)`);
        }
      }),
      { numRuns: 150 },
    );
  });

  test("re-encoding from a later committed offset keeps the claims above it", () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), (h, pick) => {
        const e = encodeCompletedSet("t", 0, h.input);
        if (!e) return;
        const d = decodeCompletedSet("t", 0, h.base, e.metadata);
        assert.ok(d.ok);
        const later = h.base + (pick % (e.end - h.base));
        const out = new Float64Array(2 * d.set.runCount + 2);
        const n = d.set.unfinishedRuns(later, out, d.set.runCount + 1);
        const again = encodeCompletedSet("t", 0, { base: later, end: d.set.end, runs: out, count: n });
        const model: History = { ...h, base: later, unfinished: new Set([...h.unfinished].filter((o) => o >= later)) };
        if (!again) {
          let covered = 0;
          for (let i = 0; i < n; i++) covered += out[2 * i + 1];
          assert.equal(covered, d.set.end - later, "undefined only when nothing above the later offset is finished");
          return;
        }
        const d2 = decodeCompletedSet("t", 0, later, again.metadata);
        assert.ok(d2.ok, d2.ok ? "" : d2.reason);
        assert.equal(decodeCompletedSet("t", 0, h.base, again.metadata).ok, later === h.base, "bound to the later offset");
        checkClaim({ ...model, input: { base: later, end: d.set.end, runs: out, count: n }, lastFinishedEnd: h.lastFinishedEnd }, d2.set, again.end);
      }),
      { numRuns: 150 },
    );
  });

  test("fuzz: mutated strings (truncated, flipped, replaced, inserted, deleted) are rejected, never trusted", () => {
    let accepted = 0, tried = 0;
    fc.assert(
      fc.property(historyArb, fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 6 })), { minLength: 1, maxLength: 30 }), (h, mutations) => {
        const e = encodeCompletedSet("orders", 1, h.input, { budget: 600 });
        if (!e) return;
        const s = e.metadata;
        for (const [i0, j0, kind] of mutations) {
          const i = i0 % s.length;
          let m: string;
          switch (kind) {
            case 0:
              m = s.slice(0, i); // truncated (possibly to "")
              break;
            case 1: {
              const bit = 1 << (j0 % 7); // one bit of the character
              m = s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ bit) + s.slice(i + 1);
              break;
            }
            case 2: {
              const c = ALPHA[j0 % 91];
              if (c === s[i]) continue;
              m = s.slice(0, i) + c + s.slice(i + 1);
              break;
            }
            case 3:
              m = s.slice(0, i) + ALPHA[j0 % 91] + s.slice(i);
              break;
            case 4:
              m = s.slice(0, i) + s.slice(i + 1);
              break;
            case 5:
              m = s + ALPHA[j0 % 91].repeat(1 + (j0 % 3));
              break;
            default: {
              const j = j0 % s.length;
              if (s[i] === s[j]) continue;
              const a = [...s];
              [a[i], a[j]] = [a[j], a[i]];
              m = a.join("");
            }
          }
          tried++;
          const d = decodeCompletedSet("orders", 1, h.base, m);
          if (d.ok) {
            accepted++;
            checkClaim(h, d.set, d.set.end); // a checksum collision: still never claims an unfinished record
          } else assert.equal(typeof d.reason, "string");
        }
      }),
      { numRuns: 300 },
    );
    assert.ok(tried > 500, `tried ${tried}`);
    assert.equal(accepted, 0, `${accepted} of ${tried} mutated strings passed the check`);
  });

  test("fuzz: another committed offset, topic or partition is rejected", () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: -1000, max: 1000 }).filter((x) => x !== 0), (h, delta) => {
        const e = encodeCompletedSet("orders", 1, h.input);
        if (!e) return;
        const other = h.base + delta;
        if (other >= 0) assert.equal(decodeCompletedSet("orders", 1, other, e.metadata).ok, false, `read back at ${other}`);
        if (other >= 0) assert.equal(decodeCompletedSet("orders", 1, BigInt(other), e.metadata).ok, false);
        assert.equal(decodeCompletedSet("orders", 2, h.base, e.metadata).ok, false, "partition 2");
        assert.equal(decodeCompletedSet("orders", 0, h.base, e.metadata).ok, false, "partition 0");
        assert.equal(decodeCompletedSet("order", 1, h.base, e.metadata).ok, false, "topic order");
        assert.equal(decodeCompletedSet("orders-", 1, h.base, e.metadata).ok, false, "topic orders-");
        assert.equal(decodeCompletedSet("orders", 1, h.base, e.metadata).ok, true);
        assert.equal(decodeCompletedSet("orders", 1, String(h.base), e.metadata).ok, true, "KafkaJS gives the offset as a string");
      }),
      { numRuns: 200 },
    );
  });

  test("fuzz: random strings, PC-style base64, empty and missing metadata: rejected with a reason, never thrown", () => {
    const ours = fc.array(fc.constantFrom(...ALPHA), { minLength: 0, maxLength: 300 }).map((a) => a.join(""));
    const any = fc.string({ unit: "binary", maxLength: 300 });
    const pc = fc.tuple(fc.constantFrom(..."lonepaJsL"), fc.uint8Array({ maxLength: 200 })).map(([magic, bytes]) =>
      btoa(String.fromCharCode(magic.charCodeAt(0), ...bytes))
    );
    fc.assert(
      fc.property(fc.oneof(ours, any, pc), fc.integer({ min: 0, max: 2 ** 53 - 1 }), (m, b) => {
        const d = decodeCompletedSet("t", 0, b, m);
        assert.equal(d.ok, false, `accepted ${JSON.stringify(m)}`);
        if (!d.ok) assert.ok(d.reason.length > 0);
      }),
      { numRuns: 2000 },
    );
    for (const m of ["", null, undefined]) {
      const d = decodeCompletedSet("t", 0, 5, m);
      assert.equal(d.ok, false);
      assert.match(d.ok ? "" : d.reason, /empty/);
    }
    const e = encodeCompletedSet("t", 0, { base: 5, end: 9, runs: new Float64Array(0), count: 0 })!;
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, "-1", e.metadata)), /committed offset "-1"/);
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "~" + e.metadata.slice(1))), /unknown format '~'/);
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 6, e.metadata)), /check mismatch/);
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "!".repeat(MAX_METADATA_LENGTH + 1))), /too long/);
    // "C" (index 32) opens format 2 (runs, version 2) with four zero bits; "!" is index 0
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "C!")), /truncated/);
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "Cé!!!!!!")), /outside the alphabet/);
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "!".repeat(40))), /version 1.*no longer trusted/);
    // the longest string of zero bits (padding only) is rejected fast
    assert.match(((d) => d.ok ? "" : d.reason)(decodeCompletedSet("t", 0, 5, "C" + "!".repeat(MAX_METADATA_LENGTH - 1))), /check mismatch/);
  });

  test("padding never decodes into a claim: zero bits never complete a code", () => {
    // a valid runs string whose checksum is recomputed over extra zero bits is still the same claim
    for (const extra of [0, 1, 5, 6, 7, 12, 13, 40]) {
      const payload = "1" + bin(0, 6) + bin(0, 6) + "0001000" + "1" + "0".repeat(extra); // F: eg0 v=7 → len 8, U: v=0 → len 1, then zeros
      const m = specString(0, payload, "t", 0, 100);
      const d = decodeCompletedSet("t", 0, 100, m);
      assert.ok(!d.ok, "ends with an unfinished run: rejected as inconsistent");
      const payload2 = "1" + bin(0, 6) + bin(0, 6) + "0001000" + "0".repeat(extra);
      const d2 = decodeCompletedSet("t", 0, 100, specString(0, payload2, "t", 0, 100));
      assert.ok(d2.ok, d2.ok ? "" : d2.reason);
      assert.equal(d2.set.end, 108);
      assert.equal(d2.set.finishedCount(), 8);
      assert.equal(d2.set.runCount, 0);
    }
    // a bitmap's trailing zeros are unfinished
    const d3 = decodeCompletedSet("t", 0, 100, specString(1, "1011" + "0".repeat(30), "t", 0, 100));
    assert.ok(d3.ok);
    assert.equal(d3.set.end, 104);
    assert.deepEqual([100, 101, 102, 103, 104].map((o) => d3.set.isFinished(o)), [true, false, true, true, false]);
    // a run past 2^53 is rejected (span)
    const huge = decodeCompletedSet("t", 0, 2 ** 53 - 10, specString(0, "1" + bin(0, 6) + bin(0, 6) + "0000" + "10000", "t", 0, 2 ** 53 - 10));
    assert.match(huge.ok ? "" : huge.reason, /span/);
    // a code cut by the end of the stream is rejected
    const cut = decodeCompletedSet("t", 0, 1, specString(0, "1" + bin(0, 6) + bin(20, 6) + "1", "t", 0, 1));
    assert.match(cut.ok ? "" : cut.reason, /truncated/);
  });
});
