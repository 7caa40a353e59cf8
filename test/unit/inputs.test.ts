import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  CapacityError,
  Completion,
  InvalidArgumentError,
  InvalidBatchError,
  InvalidOffsetError,
  RevokedError,
  Tracker,
  toOffset,
} from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

const BAD: unknown[] = [
  -1, -0.5, 1.5, NaN, Infinity, -Infinity, 2 ** 53, 2 ** 60, -1n, 2n ** 53n, "", " 1", "1 ", "-1", "1.0", "1e3", "0x10",
  "abc", "9007199254740992", "12345678901234567", null, undefined, true, {}, [1], Symbol("x"),
];

describe("offset conversion at the edge", () => {
  test("number, bigint and decimal string agree", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        assert.equal(toOffset(n), n);
        assert.equal(toOffset(BigInt(n)), n);
        assert.equal(toOffset(String(n)), n);
      }),
    );
    assert.equal(toOffset("007"), 7);
    assert.equal(Object.is(toOffset(-0), 0), true);
  });

  test("anything else is an InvalidOffsetError naming the value", () => {
    for (const bad of BAD) {
      assert.throws(() => toOffset(bad, "offsets[3]"), (e: unknown) => {
        assert.ok(e instanceof InvalidOffsetError);
        assert.equal(e.value, bad);
        assert.match(e.message, /^offsets\[3\] must be an integer in \[0, 2\^53\)/);
        assert.ok(e.message.includes(typeof bad === "symbol" ? "a symbol" : String(typeof bad === "bigint" ? `${bad}n` : "")));
        return true;
      });
    }
  });
});

for (const engine of ENGINES) {
  describe(`bad input changes nothing (${engine})`, () => {
    function fresh(): { t: Tracker; h: number } {
      const t = new Tracker({ start: 10, capacity: 8, engine });
      const h = t.register([10, 11, 13], 15);
      t.complete(h + 1);
      return { t, h };
    }
    const snapshot = (t: Tracker) => {
      const { bytes: _b, oldestPendingAgeMs: _a, ...s } = t.stats();
      return s;
    };

    test("invalid offsets in a batch", () => {
      for (const bad of BAD) {
        const { t } = fresh();
        const before = snapshot(t);
        assert.throws(() => t.register([15, bad as number, 20], 21), InvalidOffsetError);
        assert.throws(() => t.register([15, 16], bad as number), InvalidOffsetError);
        // Also out of order (below the previous next, or not increasing): the bad value still names itself.
        assert.throws(() => t.register([0, bad as number], 1), InvalidOffsetError);
        assert.throws(() => t.register([20, 16, bad as number], 21), InvalidOffsetError);
        assert.throws(() => t.register([20, 21], bad as number), InvalidOffsetError);
        assert.deepEqual(snapshot(t), before);
      }
    });

    test("unsorted, overlapping, bad next, over capacity", () => {
      const { t, h } = fresh();
      const before = snapshot(t);
      const cases: Array<[unknown[], unknown, RegExp, new (...a: never[]) => Error]> = [
        [[16, 16], 17, /strictly increasing: offsets\[1\] = 16 follows offsets\[0\] = 16/, InvalidBatchError],
        [[17, 16], 18, /strictly increasing: offsets\[1\] = 16 follows offsets\[0\] = 17/, InvalidBatchError],
        [[14, 16], 17, /offsets\[0\] = 14 is below the previous batch's next position 15/, InvalidBatchError],
        [[15, 16], 16, /next must be past the batch's last offset 16; got 16/, InvalidBatchError],
        [[], 14, /not be below the previous next position 15; got 14/, InvalidBatchError],
        [[15, 16, 17, 18, 19, 20], 21, /a batch of 6 records does not fit: 3 entries are retained .* capacity of 8/, CapacityError],
      ];
      for (const [offsets, next, message, type] of cases) {
        assert.throws(() => t.register(offsets as number[], next as number), (e: unknown) => e instanceof type && message.test((e as Error).message));
        assert.deepEqual(snapshot(t), before);
      }
      assert.throws(() => t.register("15" as unknown as number[], 16), InvalidBatchError);
      // completed-but-blocked entries count against the capacity: 3 retained (1 done) + 5 = 8 fits
      t.register([15, 16, 17, 18, 19], 20);
      assert.throws(() => t.register([20], 21), CapacityError);
      assert.equal(t.complete(h), Completion.Advanced);
      assert.equal(t.safe, 13);
    });

    test("bad options", () => {
      for (const capacity of [0, -1, 1.5, 2 ** 30 + 1, NaN]) {
        assert.throws(() => new Tracker({ capacity, engine }), (e: unknown) => e instanceof InvalidArgumentError && e.message.includes(String(capacity)));
      }
      assert.throws(() => new Tracker({ start: -5, engine }), InvalidOffsetError);
      assert.throws(() => new Tracker({ engine: "gpu" as "js" }), /engine must be "auto", "js", "wasm" or an Engine; got "gpu"/);
    });

    test("revoked trackers accept nothing and cannot be read", () => {
      const { t, h } = fresh();
      t.revoke();
      t.revoke();
      assert.equal(t.revoked, true);
      assert.throws(() => t.safe, RevokedError);
      assert.throws(() => t.delivered, RevokedError);
      assert.throws(() => t.stats(), RevokedError);
      assert.throws(() => t.register([20], 21), RevokedError);
      assert.equal(t.complete(h), Completion.Rejected);
      assert.equal(t.completeOffset(10), Completion.Rejected);
      assert.equal(t.completeMany([h, h + 2]), 0);
      assert.throws(() => t.completeOffset("x"), InvalidOffsetError);
    });

    test("non-number handles are rejected", () => {
      const { t, h } = fresh();
      assert.equal(t.complete(String(h) as unknown as number), Completion.Rejected);
      assert.equal(t.complete(BigInt(h) as unknown as number), Completion.Rejected);
      assert.equal(t.completeMany([String(h) as unknown as number]), 0);
      assert.equal(t.safe, 10);
    });
  });
}
