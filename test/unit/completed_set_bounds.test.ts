// The completed-set codec at the top of the offset range: the encoder takes every `end` its
// docs allow (up to 2^53, one past the last offset) and names the value past it; every decoder
// refuses a claim on an offset ≥ 2^53, even one with a valid check.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { decodeCompletedSet, encodeCompletedSet, InvalidArgumentError } from "../../core/tracker/mod.ts";
import { bin, specString } from "./completed_set_spec.ts";

const LIMIT = 2 ** 53;
const reason = (d: ReturnType<typeof decodeCompletedSet>): string => (d.ok ? "" : d.reason);

describe("completed-set codec: the 2^53 edge", () => {
  test("the encoder accepts end = 2^53 (one past the last offset) and the claim reads back", () => {
    const cases: [number, number[]][] = [
      [LIMIT - 1, []], // only the last offset, finished
      [LIMIT - 10, [LIMIT - 10, 3]], // 2^53 − 10 … − 8 unfinished, then finished to the top
      [0, [1, LIMIT - 2]], // offsets 0 and 2^53 − 1 finished: a span of 2^53
      [2 ** 32, []],
    ];
    for (const [b, runs] of cases) {
      const e = encodeCompletedSet("t", 3, { base: b, end: LIMIT, runs: Float64Array.from(runs), count: runs.length / 2 });
      assert.ok(e, `base ${b}`);
      assert.equal(e.end, LIMIT);
      const unfinished = runs.length === 0 ? 0 : runs[1];
      assert.equal(e.finished, LIMIT - b - unfinished);
      const d = decodeCompletedSet("t", 3, b, e.metadata);
      assert.ok(d.ok, reason(d));
      assert.equal(d.set.end, LIMIT);
      assert.equal(d.set.finishedCount(), e.finished);
      assert.equal(d.set.isFinished(LIMIT - 1), true, "the last offset");
      assert.equal(d.set.isFinished(LIMIT), false, "2^53 itself is never claimed");
      if (runs.length > 0) {
        assert.equal(d.set.isFinished(runs[0]), false);
        assert.equal(d.set.isFinished(runs[0] + runs[1] - 1), false);
        assert.equal(d.set.isFinished(runs[0] + runs[1]), true);
      }
    }
  });

  test("past 2^53 the encoder throws a typed error naming the value, and nothing is encoded", () => {
    for (const end of [LIMIT + 2, LIMIT * 2, Infinity, NaN]) {
      assert.throws(
        () => encodeCompletedSet("t", 0, { base: LIMIT - 1, end, runs: new Float64Array(0), count: 0 }),
        (e: unknown) => e instanceof InvalidArgumentError && e.message.includes(`input.end`) && e.message.includes(String(end)) && e.message.includes("2^53]"),
        `end ${end}`,
      );
    }
    // a run that reaches past 2^53
    assert.throws(
      () => encodeCompletedSet("t", 0, { base: LIMIT - 4, end: LIMIT, runs: new Float64Array([LIMIT - 2, 4]), count: 1 }),
      (e: unknown) => e instanceof InvalidArgumentError && /runs\[1\].*got 4/.test(e.message),
    );
    assert.throws(() => encodeCompletedSet("t", 0, { base: LIMIT, end: LIMIT, runs: new Float64Array(0), count: 0 }), /input\.base.*9007199254740992/);
  });

  test("a bitmap with a valid check that reaches 2^53 or past it: up to 2^53 read, past it refused", () => {
    // base 2^53 − 2: bits 11 are offsets 2^53 − 2 and 2^53 − 1; a third bit would be 2^53
    const ok = decodeCompletedSet("t", 0, LIMIT - 2, specString(1, "11", "t", 0, LIMIT - 2));
    assert.ok(ok.ok, reason(ok));
    assert.equal(ok.set.end, LIMIT);
    for (const [b, bits] of [[LIMIT - 2, "101"], [LIMIT - 1, "01"], [LIMIT - 1, "111111"], [LIMIT - 1, "1" + "0".repeat(40) + "1"], [LIMIT - 300, "1".repeat(301)]] as const) {
      const d = decodeCompletedSet("t", 0, b, specString(1, bits, "t", 0, b));
      assert.match(reason(d), /span.*2\^53/, `base ${b}, bits ${bits}`);
    }
  });

  test("runs with a valid check that pass 2^53 are refused; ending at 2^53 is read", () => {
    // flag 1 (first run finished), codes eg0/eg0, one finished run of length L: eg0 of L − 1
    const eg0 = (v: number): string => {
      const x = (v + 1).toString(2);
      return "0".repeat(x.length - 1) + x;
    };
    const runs = (length: number): string => "1" + bin(0, 6) + bin(0, 6) + eg0(length - 1);
    for (const b of [LIMIT - 1, LIMIT - 5, LIMIT - 2 ** 20]) {
      const fits = decodeCompletedSet("t", 0, b, specString(0, runs(LIMIT - b), "t", 0, b));
      assert.ok(fits.ok, reason(fits));
      assert.equal(fits.set.end, LIMIT);
      const past = decodeCompletedSet("t", 0, b, specString(0, runs(LIMIT - b + 1), "t", 0, b));
      assert.match(reason(past), /span/, `base ${b}`);
    }
  });

  test("fuzz: near 2^53, no decoded claim ever covers an offset ≥ 2^53", () => {
    let read = 0, refused = 0;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4096 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 5000, size: "medium" }), fc.boolean(), (below, bits, asRuns) => {
        const b = LIMIT - below;
        let payload: string;
        if (asRuns) {
          // alternating runs (finished first) of random lengths from the booleans, eg0-coded
          payload = "1" + bin(0, 6) + bin(0, 6);
          let length = 1;
          for (const x of bits) {
            if (x) {
              payload += "0".repeat(bin(length, 1).length - 1) + bin(length, 1);
              length = 1;
            } else length++;
          }
        } else payload = bits.map((x) => (x ? "1" : "0")).join("");
        const d = decodeCompletedSet("t", 0, b, specString(asRuns ? 0 : 1, payload, "t", 0, b));
        if (!d.ok) return void refused++;
        read++;
        assert.ok(d.set.end <= LIMIT, `end ${d.set.end} past 2^53`);
        assert.ok(Number.isInteger(d.set.end - d.set.base) && d.set.end - d.set.base <= below);
        assert.equal(d.set.isFinished(LIMIT), false);
      }),
      { numRuns: 300 },
    );
    assert.ok(read > 20 && refused > 20, `both sides of the edge: ${read} read, ${refused} refused`);
  });
});
