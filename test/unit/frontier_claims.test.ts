// The completed set as the frontier commits it, read back the way the next owner reads it:
// for random delivery and completion histories (gaps, out of order, slow heads), on both
// engines, a decoded claim never marks an unfinished record finished, and it carries what
// an earlier owner finished across further handovers before those records are delivered.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { decodeCompletedSet, Frontier } from "../../core/mod.ts";
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
});
