import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Completion, Frontier, InvalidArgumentError } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

for (const engine of ENGINES) {
  describe(`frontier (${engine})`, () => {
    test("with completed sets, a finished record above an unmoved safe position is committed again, with its set", () => {
      const f = new Frontier({ engine });
      const a = f.assign("t", 0, 0);
      const p0 = f.propose()!;
      f.confirm(p0);
      const h = a.register([0, 1, 2], 3);
      assert.equal(f.propose(), undefined, "nothing finished");
      a.complete(h + 1);
      const p1 = f.propose();
      assert.equal(p1?.offsets[0].offset, 0);
      assert.ok(p1?.offsets[0].metadata, "the same offset, now with 1 claimed finished");
      assert.equal(f.propose(), undefined, "in flight already, nothing new");
      f.fail(p1!);
      assert.ok(f.propose()?.offsets[0].metadata, "a failed commit's set is proposed again");
    });

    test("proposals hold only partitions that moved; confirmed moves only on confirmation", () => {
      const f = new Frontier({ engine, completedSet: false });
      const a = f.assign("t", 0, 0);
      const b = f.assign("t", 1, 50);
      const c = f.assign("u", 0);
      const p0 = f.propose(); // a start counts as a position to pin: nothing is confirmed in this assignment yet
      assert.deepEqual(p0?.offsets, [{ topic: "t", partition: 0, offset: 0 }, { topic: "t", partition: 1, offset: 50 }]);
      f.confirm(p0!);
      assert.equal(f.propose(), undefined, "nothing moved since (c has no known position)");
      const ha = a.register([0, 1, 2], 3);
      b.register([50, 51], 52);
      a.complete(ha + 1);
      assert.equal(f.propose(), undefined, "a's head is unfinished");
      a.complete(ha);
      const p1 = f.propose();
      assert.deepEqual(p1?.offsets, [{ topic: "t", partition: 0, offset: 2 }]);
      assert.deepEqual(f.positions("t", 0), { delivered: 3, safe: 2, confirmed: 0, inflight: 2 });
      assert.equal(f.propose(), undefined, "in flight already");
      f.fail(p1!);
      assert.equal(f.positions("t", 0)?.confirmed, 0, "a failed commit moves nothing");
      const p2 = f.propose();
      assert.deepEqual(p2?.offsets, [{ topic: "t", partition: 0, offset: 2 }]);
      a.complete(ha + 2);
      assert.equal(f.propose()?.offsets[0].offset, 3, "newer position while an older commit is in flight");
      f.confirm(p2!);
      assert.equal(f.positions("t", 0)?.confirmed, 2);
      c.register([7], 8);
      assert.equal(f.propose()?.offsets.length, 1, "c at 7 is its first known position");
    });

    test("lost partitions are never proposed; a revoked one yields its final commit once", () => {
      const f = new Frontier({ engine });
      const a = f.assign("t", 0, 0);
      const b = f.assign("t", 1, 0);
      const ha = a.register([0], 1);
      const hb = b.register([0], 1);
      a.complete(ha);
      b.complete(hb);
      f.lose("t", 0);
      assert.deepEqual(f.revoke("t", 1), { topic: "t", partition: 1, offset: 1 });
      assert.equal(f.propose(), undefined);
      assert.equal(f.revoke("t", 1), undefined);
      assert.deepEqual(f.assigned(), []);
      assert.equal(a.complete(ha), Completion.Rejected);
    });

    test("a reassignment gets a fresh tracker; old handles and old proposals do not touch it", () => {
      const f = new Frontier({ engine });
      const old = f.assign("t", 0, 0);
      const h = old.register([0, 1], 2);
      old.complete(h);
      const p = f.propose()!;
      const fresh = f.assign("t", 0, 1);
      fresh.register([1, 2], 3);
      assert.equal(fresh.complete(h + 1), Completion.Rejected);
      assert.equal(old.revoked, true);
      f.confirm(p);
      assert.equal(f.positions("t", 0)?.confirmed, undefined, "the old assignment's commit does not confirm the new one");
      assert.throws(() => f.assign("", 0), InvalidArgumentError);
      assert.throws(() => f.assign("t", -1), /partition must be an integer in \[0, 2\^31\); got -1/);
    });

    test("partitions never influence each other (random interleavings)", () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ p: fc.integer({ min: 0, max: 3 }), size: fc.integer({ min: 1, max: 20 }) }), { maxLength: 20 }),
          fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.nat()), { maxLength: 200 }),
          fc.array(fc.constantFrom("propose", "confirm", "fail"), { maxLength: 30 }),
          (batches, completions, commits) => {
            const f = new Frontier({ engine });
            const parts = [0, 1, 2, 3].map((p) => ({ t: f.assign("x", p, p * 1000), handles: [] as number[], offsets: [] as number[], done: [] as boolean[], next: p * 1000 }));
            for (const { p, size } of batches) {
              const s = parts[p];
              const offs = Array.from({ length: size }, (_, i) => s.next + i * 2);
              const h = s.t.register(offs, s.next + size * 2);
              offs.forEach((o, i) => (s.handles.push(h + i), s.offsets.push(o), s.done.push(false)));
              s.next += size * 2;
            }
            const confirmed = [-1, -1, -1, -1];
            const pending: Array<ReturnType<Frontier["propose"]>> = [];
            let k = 0;
            for (const [p, pick] of completions) {
              const s = parts[p];
              if (s.handles.length > 0) {
                const i = pick % s.handles.length;
                s.t.complete(s.handles[i]);
                s.done[i] = true;
              }
              for (const q of parts) {
                const i = q.done.indexOf(false);
                assert.equal(q.t.safe, i < 0 ? q.next : q.offsets[i]);
              }
              const action = commits[k++ % Math.max(1, commits.length)];
              if (action === "propose") {
                const prop = f.propose();
                if (prop) {
                  for (const c of prop.offsets) assert.equal(c.offset, parts[c.partition].t.safe);
                  pending.push(prop);
                }
              } else if (pending.length > 0) {
                const prop = pending.shift()!;
                if (action === "confirm") {
                  f.confirm(prop);
                  for (const c of prop.offsets) confirmed[c.partition] = Math.max(confirmed[c.partition], c.offset);
                } else f.fail(prop);
              }
              for (let q = 0; q < 4; q++) {
                const c = f.positions("x", q)!.confirmed;
                assert.equal(c ?? -1, confirmed[q]);
                assert.ok(c === undefined || c <= parts[q].t.safe!);
              }
            }
            f.close();
          },
        ),
        { numRuns: 150 },
      );
    });
  });
}
