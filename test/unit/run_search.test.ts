import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";
import { rng, shuffle } from "./random.ts";

/**
 * Completing by offset across thousands of runs (a run is a stretch of consecutive
 * offsets): the engines find the run by interpolation, then bisection. Gap layouts that
 * are uneven on purpose (growing gaps, dense bursts between huge gaps, gaps up to 10^12)
 * must give exactly the answers of a plain oracle, for delivered offsets and for offsets
 * inside the gaps, after every call.
 */
const LAYOUTS: Record<string, (i: number, rand: (n: number) => number) => number> = {
  growing: (i) => Math.floor(1.003 ** i), // gaps grow geometrically: interpolation guesses badly
  bursts: (i, rand) => (i % 200 === 199 ? 1_000_000_000 + rand(1000) : rand(3) === 0 ? 1 : 0),
  huge: (_i, rand) => rand(2) === 0 ? 0 : rand(1_000_000) * 1_000_000,
  compacted: (_i, rand) => rand(1_000_001),
};

for (const engine of ENGINES) {
  describe(`completeOffset over many runs (${engine})`, () => {
    for (const [name, gap] of Object.entries(LAYOUTS)) {
      test(name, () => {
        const rand = rng(name.length * 7919 + 17);
        const offsets: number[] = [];
        let o = 1_000;
        for (let i = 0; i < 3_000; i++) {
          offsets.push(o);
          o += 1 + gap(i, rand);
        }
        const t = new Tracker({ engine, start: offsets[0] });
        for (let i = 0; i < offsets.length;) {
          const size = 1 + rand(50);
          const batch = offsets.slice(i, i + size);
          i += batch.length;
          t.register(batch, i < offsets.length ? offsets[i] : o);
        }
        // The oracle: which delivered offsets are done, and the head index.
        const index = new Map(offsets.map((x, i) => [x, i]));
        const done = new Array<boolean>(offsets.length).fill(false);
        let head = 0;
        const safe = () => (head < offsets.length ? offsets[head] : o);
        const expect = (x: number): Completion => {
          const i = index.get(x);
          if (i === undefined) return x >= offsets[0] && x < safe() ? Completion.Duplicate : Completion.Rejected;
          if (done[i]) return Completion.Duplicate;
          done[i] = true;
          if (i !== head) return Completion.Completed;
          while (head < offsets.length && done[head]) head++;
          return Completion.Advanced;
        };
        for (const i of shuffle(offsets.map((_, i) => i), rand)) {
          const x = offsets[i];
          for (const probe of [x - 1, x + 1, x]) { // neighbours first: inside a gap, delivered, or already done
            assert.equal(t.completeOffset(probe), expect(probe), `completeOffset(${probe})`);
            assert.equal(t.safe, safe());
          }
        }
        assert.equal(t.safe, o);
      });
    }
  });
}

for (const engine of ENGINES) {
  describe(`run storage (${engine})`, () => {
    test("a steady stream of gapped batches keeps its storage flat", () => {
      // Every record its own run (compacted): each batch is registered once the previous
      // one is wholly complete, so only one batch's runs are ever live. The run storage
      // must stop growing once it holds one batch, however the head moved in between.
      const t = new Tracker({ engine, start: 0 });
      let o = 0;
      let first = 0;
      for (let round = 0; round < 50; round++) {
        const batch = Array.from({ length: 500 }, (_, i) => o + 3 * i);
        o += 1500;
        const h = t.register(batch, o);
        for (let i = 499; i >= 0; i--) t.complete(h + i);
        assert.equal(t.safe, o);
        if (round === 0) first = t.stats().bytes;
        else assert.equal(t.stats().bytes, first, `bytes held in round ${round}`);
      }
    });
  });
}
