import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Completion, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

/** Large batches: ring growth, wrap-around, summary-level skips, checked against a simple frontier. */
for (const engine of ENGINES) {
  describe(`large random batches (${engine})`, () => {
    test("ring growth, wrap-around and summary skips agree with the first-unfinished rule", () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ size: fc.integer({ min: 1, max: 5000 }), gappy: fc.boolean() }), { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 1, max: 64 }),
          fc.integer(),
          (batches, completeEvery, seed) => {
            const t = new Tracker({ start: 0, engine, capacity: 40_000 });
            const offsets: number[] = [];
            const handles: number[] = [];
            const done: boolean[] = [];
            let rng = seed >>> 0 || 1;
            const rand = (n: number) => {
              rng ^= rng << 13;
              rng ^= rng >>> 17;
              rng ^= rng << 5;
              return (rng >>> 0) % n;
            };
            let cur = 0, head = 0, next = 0;
            const open: number[] = []; // indices not completed yet
            for (const b of batches) {
              const batch: number[] = [];
              for (let i = 0; i < b.size; i++) {
                batch.push(cur);
                cur += b.gappy ? 1 + rand(3) : 1;
              }
              next = cur + rand(3);
              cur = next;
              const first = t.register(batch, next);
              for (let i = 0; i < batch.length; i++) {
                open.push(offsets.length);
                offsets.push(batch[i]);
                handles.push(first + i);
                done.push(false);
              }
              // complete a random part of what is open, in random order
              const k = Math.floor(open.length * 0.7);
              for (let j = 0; j < k; j++) {
                const pick = rand(open.length);
                const idx = open[pick];
                open[pick] = open[open.length - 1];
                open.pop();
                done[idx] = true;
                const code = t.complete(handles[idx]);
                assert.ok(code === Completion.Completed || code === Completion.Advanced);
                if (j % completeEvery === 0) {
                  while (head < done.length && done[head]) head++;
                  assert.equal(t.safe, head < offsets.length ? offsets[head] : next);
                }
              }
            }
            // finish everything in random order (completeMany for half of it)
            const rest = open.sort(() => rand(3) - 1);
            const half = rest.length >> 1;
            assert.equal(t.completeMany(rest.slice(0, half).map((i) => handles[i])), half);
            for (const i of rest.slice(half)) t.complete(handles[i]);
            assert.equal(t.safe, next);
            const s = t.stats();
            assert.equal(s.retained, 0);
            assert.equal(s.blocked, 0);
            t.revoke();
          },
        ),
        { numRuns: 60 },
      );
    });

    test("a slow head behind 1,000,000 finished records", () => {
      const n = 1_000_000;
      const t = new Tracker({ start: 0, engine });
      const offsets = new Float64Array(n);
      for (let i = 0; i < n; i++) offsets[i] = i * 2; // gaps of one everywhere
      const first = t.register(offsets, 2 * n);
      for (let i = n - 1; i >= 1; i--) t.complete(first + i);
      assert.equal(t.safe, 0);
      assert.deepEqual([t.stats().pending, t.stats().blocked], [1, n - 1]);
      assert.equal(t.completeOffset(0), Completion.Advanced);
      assert.equal(t.safe, 2 * n);
      assert.equal(t.stats().retained, 0);
      t.revoke();
    });
  });
}
