import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidBatchError, InvalidOffsetError, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

/**
 * `register` takes a plainly valid Float64Array without copying it; anything else in a
 * Float64Array must be rejected exactly as the same values in a plain array are.
 */
for (const engine of ENGINES) {
  describe(`register with a Float64Array (${engine})`, () => {
    const outcome = (t: Tracker, batch: ArrayLike<number>, next: number) => {
      try {
        const first = t.register(batch, next);
        return { first, error: undefined, message: undefined, safe: t.safe, stats: t.stats() };
      } catch (e) {
        const { name, message } = e as Error;
        return { first: undefined, error: name, message, safe: t.safe, stats: t.stats() };
      }
    };

    test("agrees with a plain array on valid and invalid batches, and leaves nothing behind on error", () => {
      const value = fc.oneof(
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(-0, -1, 0.5, NaN, Infinity, 2 ** 53, 2 ** 53 - 1),
      );
      fc.assert(
        fc.property(fc.array(fc.array(value, { maxLength: 6 }), { maxLength: 4 }), fc.integer({ min: 0, max: 3 }), (batches, start) => {
          const a = new Tracker({ engine, start, clock: () => 0 });
          const b = new Tracker({ engine, start, clock: () => 0 });
          const issued: [number, number][] = []; // handles of the same record in a and b
          for (const batch of batches) {
            const next = batch.length > 0 && Number.isSafeInteger(batch[batch.length - 1]) ? batch[batch.length - 1] + 1 : start;
            const x = outcome(a, batch, next), y = outcome(b, Float64Array.from(batch), next);
            assert.deepEqual(y.stats, x.stats);
            assert.equal(y.error, x.error);
            assert.equal(y.message, x.message);
            assert.ok(Object.is(y.safe, x.safe));
            if (x.first !== undefined && y.first !== undefined) {
              for (let i = 0; i < batch.length; i++) issued.push([x.first + i, y.first + i]);
            }
          }
          for (const [hx, hy] of issued.reverse()) {
            assert.equal(b.complete(hy), a.complete(hx));
            assert.equal(b.safe, a.safe);
          }
        }),
      );
    });

    test("a bad value is named, -0 becomes 0, the first offset may equal the floor", () => {
      const t = new Tracker({ engine, start: 0 });
      assert.throws(() => t.register(new Float64Array([1, 2.5]), 3), InvalidOffsetError);
      assert.throws(() => t.register(new Float64Array([2, 1]), 3), InvalidBatchError);
      const h = t.register(new Float64Array([-0, 1]), 2);
      assert.ok(Object.is(t.safe, 0));
      t.complete(h);
      assert.equal(t.safe, 1);
      assert.throws(() => t.register(new Float64Array([1]), 2), InvalidBatchError); // below next = 2
      t.register(new Float64Array([2, 9007199254740990]), 9007199254740991);
      assert.throws(() => t.register(new Float64Array([9007199254740992]), 9007199254740991), InvalidOffsetError);
    });

    test("long dense batches with one bad value anywhere: the same error as a plain array, nothing changed", () => {
      const bad = fc.constantFrom(-0, -1, 0.5, NaN, Infinity, 2 ** 53, "prev", "dup", "gap", "valid");
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 700 }), fc.nat(), bad, fc.constantFrom(0, 1, 2), (count, at, kind, nextKind) => {
          const start = 1_000;
          const batch = Array.from({ length: count }, (_, i) => start + i);
          const i = at % count;
          if (kind === "prev") batch[i] = i > 0 ? batch[i - 1] : start - 1; // repeats or goes below the floor
          else if (kind === "dup") batch[i] = i > 0 ? batch[i - 1] - 1 : start - 2;
          else if (kind === "gap") for (let j = i; j < count; j++) batch[j] += 3; // valid: one gap
          else if (kind !== "valid") batch[i] = kind as number;
          const last = batch[count - 1];
          const next = nextKind === 0 ? last + 1 : nextKind === 1 ? last : 2 ** 53; // valid, not past the last, not safe
          const a = new Tracker({ engine, start, clock: () => 0 });
          const b = new Tracker({ engine, start, clock: () => 0 });
          const x = outcome(a, batch, next), y = outcome(b, Float64Array.from(batch), next);
          assert.equal(y.error, x.error);
          assert.equal(y.message, x.message);
          assert.deepEqual(y.stats, x.stats);
          if (x.first !== undefined && y.first !== undefined) {
            for (let j = count - 1; j >= 0; j--) assert.equal(b.complete(y.first + j), a.complete(x.first + j));
            assert.equal(b.safe, a.safe);
          }
        }),
        { numRuns: 300 },
      );
    });

    test("the caller's array is not kept: changing it afterwards changes nothing", () => {
      const t = new Tracker({ engine, start: 10 });
      const batch = new Float64Array([10, 11, 15]);
      const h = t.register(batch, 16);
      batch.fill(0);
      t.complete(h);
      assert.equal(t.safe, 11);
      t.complete(h + 1);
      assert.equal(t.safe, 15);
      assert.equal(t.completeOffset(15), 3);
      assert.equal(t.safe, 16);
    });
  });
}
