// The completed set as the frontier commits it, read back the way the next owner reads it:
// for random delivery and completion histories (gaps, out of order, slow heads), on both
// engines, a decoded claim never marks an unfinished record finished, and it carries what
// an earlier owner finished across further handovers before those records are delivered.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { CompletedSet, decodeCompletedSet, encodeCompletedSet, Frontier, InvalidArgumentError, unionOfClaims } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

interface History {
  start: number;
  gaps: number[]; // offset step before each record (1 = dense)
  batch: number; // records per batch
  order: number[]; // completion order (indices into the records; repeats ignored)
  completeShare: number; // fraction of `order` that completes
  budget: number;
}

const history: fc.Arbitrary<History> = fc.record({
  start: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(2 ** 52)),
  gaps: fc.array(fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 50_000 }) }), {
    minLength: 1,
    maxLength: 300,
  }),
  batch: fc.integer({ min: 1, max: 64 }),
  order: fc.array(fc.nat(299), { maxLength: 400 }),
  completeShare: fc.double({ min: 0, max: 1, noNaN: true }),
  budget: fc.oneof(fc.constant(4096), fc.integer({ min: 16, max: 200 })),
});

/** Delivered offsets of a history. */
function offsetsOf(h: History): number[] {
  const out: number[] = [];
  let o = h.start;
  for (let i = 0; i < h.gaps.length; i++) {
    if (i > 0) o += h.gaps[i];
    out.push(o);
  }
  return out;
}

describe("frontier: completed sets in the commit metadata", () => {
  for (const engine of ENGINES) {
    test(`${engine}: a decoded claim never covers an unfinished record and covers every finished one that fits`, () => {
      fc.assert(
        fc.property(history, (h) => {
          const offsets = offsetsOf(h);
          const f = new Frontier({ engine, completedSet: { budget: h.budget } });
          const t = f.assign("t", 0, offsets[0]);
          const handles: number[] = [];
          for (let i = 0; i < offsets.length; i += h.batch) {
            const chunk = offsets.slice(i, i + h.batch);
            const next = i + h.batch >= offsets.length ? chunk[chunk.length - 1] + 1 + (h.gaps[0] % 3) : offsets[i + h.batch];
            const first = t.register(chunk, next);
            chunk.forEach((_, j) => handles.push(first + j));
          }
          const done = new Set<number>();
          const n = Math.floor(h.order.length * h.completeShare);
          for (const k of h.order.slice(0, n)) {
            if (k >= offsets.length) continue;
            t.complete(handles[k]);
            done.add(offsets[k]);
          }
          const p = f.propose();
          if (!p) return; // nothing moved past the start
          const c = p.offsets[0];
          assert.equal(c.offset, t.safe);
          if (c.metadata === undefined) {
            // only when nothing above the safe position is finished
            assert.ok(offsets.every((o) => o < c.offset || !done.has(o)));
            return;
          }
          assert.ok(c.metadata.length <= h.budget, `metadata ${c.metadata.length} chars over the budget ${h.budget}`);
          const r = decodeCompletedSet("t", 0, c.offset, c.metadata);
          assert.ok(r.ok, r.ok ? "" : r.reason);
          if (!r.ok) return;
          const delivered = new Set(offsets);
          for (const o of offsets) {
            if (r.set.isFinished(o)) assert.ok(done.has(o), `offset ${o} claimed finished, never completed`);
          }
          if (h.budget >= 4096 && offsets.length <= 300) {
            // the whole set fits: every finished record above the commit is claimed
            for (const o of done) if (o >= c.offset) assert.ok(r.set.isFinished(o), `finished offset ${o} not claimed`);
          }
          // never-delivered offsets inside the claim count as finished, past its end nothing does
          assert.equal(r.set.isFinished(r.set.end), false);
          for (let o = c.offset; o < Math.min(r.set.end, c.offset + 2000); o++) {
            if (!delivered.has(o)) assert.ok(r.set.isFinished(o), `gap ${o} should count as finished`);
          }
          // bound to the offset it was committed with
          assert.equal(decodeCompletedSet("t", 0, c.offset + 1, c.metadata).ok, false);
          assert.equal(decodeCompletedSet("t", 1, c.offset, c.metadata).ok, false);
          f.close();
        }),
        { numRuns: 300 },
      );
    });
  }

  test("a claim survives a further handover before its records are delivered again", () => {
    // Owner A: 0..99 delivered, everything finished except 10 and 50.
    const a = new Frontier({ engine: "js" });
    const ta = a.assign("t", 0, 0);
    const ha = ta.register(Array.from({ length: 100 }, (_, i) => i), 100);
    for (let i = 0; i < 100; i++) if (i !== 10 && i !== 50) ta.complete(ha + i);
    const pa = a.propose()!;
    assert.equal(pa.offsets[0].offset, 10);
    const claimA = decodeCompletedSet("t", 0, 10, pa.offsets[0].metadata);
    assert.ok(claimA.ok);
    if (!claimA.ok) return;

    // Owner B inherits, gets only 10..19 delivered (skips 11..19, runs 10), commits at 20.
    const b = new Frontier({ engine: "wasm" });
    const tb = b.assign("t", 0, 10);
    b.inherit("t", 0, claimA.set);
    const hb = tb.register(Array.from({ length: 10 }, (_, i) => 10 + i), 20);
    for (let i = 0; i < 10; i++) if (i === 0 || claimA.set.isFinished(10 + i)) tb.complete(hb + i);
    const pb = b.propose()!;
    assert.equal(pb.offsets[0].offset, 20);
    const claimB = decodeCompletedSet("t", 0, 20, pb.offsets[0].metadata);
    assert.ok(claimB.ok, "B's commit carries A's claim past its own delivery");
    if (!claimB.ok) return;
    for (let o = 20; o < 100; o++) assert.equal(claimB.set.isFinished(o), o !== 50, `offset ${o}`);
    assert.equal(claimB.set.isFinished(100), false);
  });

  test("completedSet: false commits no metadata; a bad budget is a typed error", () => {
    const f = new Frontier({ engine: "js", completedSet: false });
    const t = f.assign("t", 0, 0);
    const h = t.register([0, 1, 2], 3);
    t.complete(h + 2);
    t.complete(h);
    assert.deepEqual(f.propose()!.offsets, [{ topic: "t", partition: 0, offset: 1 }]);
    assert.throws(() => new Frontier({ completedSet: { budget: 3 } }), /completedSet\.budget.*3/);
  });

  test("a budget outside what the encoder takes is refused where it is given, naming it; propose() never meets it", () => {
    for (const budget of [70000, 65537, 15, 0, -1, 1.5, NaN, Infinity]) {
      const options = { engine: "js" as const, completedSet: { budget } };
      assert.throws(
        () => new Frontier(options),
        (e: unknown) => e instanceof InvalidArgumentError && e.message.includes("completedSet.budget") && e.message.includes(`got ${budget}`) && e.message.includes("[16, 65536]"),
        `budget ${budget}`,
      );
      assert.deepEqual(options, { engine: "js", completedSet: { budget } }, "the options are left as they were");
    }
    // every budget it takes, propose() takes too: the ends of the range, with a set to encode
    for (const budget of [16, 65536]) {
      const f = new Frontier({ engine: "js", completedSet: { budget } });
      const t = f.assign("t", 0, 2 ** 40);
      const h = t.register([2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2], 2 ** 40 + 3);
      t.complete(h + 2);
      const p = f.propose();
      assert.ok(p && p.offsets[0].metadata !== undefined, `budget ${budget}: a commit with its set`);
      assert.ok(p.offsets[0].metadata.length <= budget);
      assert.ok(decodeCompletedSet("t", 0, 2 ** 40, p.offsets[0].metadata).ok);
    }
  });

  test("a claim that reaches 2^53 is carried into the next commit (propose() encodes end = 2^53)", () => {
    const top = 2 ** 53;
    const written = encodeCompletedSet("t", 0, { base: top - 3, end: top, runs: new Float64Array([top - 3, 1]), count: 1 });
    assert.ok(written);
    const claim = decodeCompletedSet("t", 0, top - 3, written.metadata);
    assert.ok(claim.ok);
    assert.equal(claim.set.end, top);
    const f = new Frontier({ engine: "js" });
    const t = f.assign("t", 0, top - 3);
    f.inherit("t", 0, claim.set);
    t.register([top - 3], top - 2); // the unfinished head is delivered; the claimed two are not yet
    const p = f.propose();
    assert.ok(p);
    assert.equal(p.offsets[0].offset, top - 3);
    const again = decodeCompletedSet("t", 0, top - 3, p.offsets[0].metadata);
    assert.ok(again.ok, again.ok ? "" : again.reason);
    assert.deepEqual([top - 3, top - 2, top - 1].map((o) => again.set.isFinished(o)), [false, true, true]);
    assert.equal(again.set.end, top);
  });

  test("unionOfClaims: finished where either claim says so, against a per-offset model", () => {
    const claim = fc.record({
      base: fc.integer({ min: 0, max: 40 }),
      len: fc.integer({ min: 0, max: 60 }),
      unfinished: fc.array(fc.boolean(), { maxLength: 60 }),
    }).map(({ base, len, unfinished }) => {
      const runs: number[] = [];
      for (let o = base; o < base + len; o++) {
        if (!unfinished[o - base]) continue;
        if (runs.length > 0 && runs[runs.length - 2] + runs[runs.length - 1] === o) runs[runs.length - 1]++;
        else runs.push(o, 1);
      }
      return new CompletedSet(base, base + len, Float64Array.from(runs), runs.length / 2);
    });
    fc.assert(
      fc.property(claim, claim, (a, b) => {
        const u = unionOfClaims(a, b);
        for (let o = 0; o < 110; o++) {
          const want = a.isFinished(o) || b.isFinished(o);
          assert.equal(u.isFinished(o), want, `offset ${o}`);
        }
      }),
      { numRuns: 500 },
    );
  });

  test("recall: what a lost assignment finished is remembered once, dropped when the commit passed it or went back", () => {
    const f = new Frontier({ engine: "js" });
    const t = f.assign("t", 0, 0);
    const h = t.register(Array.from({ length: 10 }, (_, i) => i), 10);
    for (const i of [0, 1, 2, 5, 6]) t.complete(h + i);
    f.confirm(f.propose()!); // confirmed 3, with 5 and 6 claimed
    for (const i of [3, 8]) t.complete(h + i); // finished after the last acknowledged commit
    f.lose("t", 0);
    const m = f.recall("t", 0, 3)!;
    assert.ok(m);
    assert.deepEqual([3, 4, 5, 6, 7, 8, 9].map((o) => m.isFinished(o)), [true, false, true, true, false, true, false]);
    assert.equal(f.recall("t", 0, 3), undefined, "forgotten once read");
    const t2 = f.assign("t", 0, 0);
    const h2 = t2.register([0, 1, 2], 3);
    t2.complete(h2 + 1);
    f.lose("t", 0);
    assert.equal(f.recall("t", 0, 5), undefined, "the commit passed its end");
    const t3 = f.assign("t", 0, 4);
    const h3 = t3.register([4, 5, 6], 7);
    t3.complete(h3 + 2);
    f.lose("t", 0);
    assert.equal(f.recall("t", 0, 2), undefined, "the offset went back (a reset): not used");
  });
});
