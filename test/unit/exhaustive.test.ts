import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";
import { permutations } from "./random.ts";

const OFFSETS = [10, 11, 13, 14, 17, 20, 21]; // gaps between delivered offsets
const NEXT = 25; // past the last record (e.g. trailing transaction markers)


/** The rule, computed without the tracker: the offset of the first unfinished record, else NEXT. */
function firstUnfinished(done: boolean[]): number {
  const i = done.indexOf(false);
  return i < 0 ? NEXT : OFFSETS[i];
}

for (const engine of ENGINES) {
  describe(`exhaustive completion orders (${engine})`, () => {
    test("all 5,040 orders of a 7-record batch with gaps", () => {
      let orders = 0;
      for (const order of permutations(OFFSETS.length)) {
        const t = new Tracker({ start: 10, engine });
        const first = t.register(OFFSETS, NEXT);
        const done = new Array<boolean>(OFFSETS.length).fill(false);
        for (const i of order) {
          const before = firstUnfinished(done);
          done[i] = true;
          const expected = firstUnfinished(done);
          const code = t.complete(first + i);
          assert.equal(code, expected === before ? Completion.Completed : Completion.Advanced);
          assert.equal(t.safe, expected, `order ${order} after completing offset ${OFFSETS[i]}`);
          assert.equal(t.complete(first + i), Completion.Duplicate);
        }
        assert.equal(t.safe, NEXT);
        assert.equal(t.stats().retained, 0);
        t.revoke();
        orders++;
      }
      assert.equal(orders, 5040);
    });

    test("all 5,040 orders completing by offset, the batch split in two", () => {
      for (const order of permutations(OFFSETS.length)) {
        const t = new Tracker({ engine });
        t.register(OFFSETS.slice(0, 3), 14);
        t.register(OFFSETS.slice(3), NEXT);
        const done = new Array<boolean>(OFFSETS.length).fill(false);
        for (const i of order) {
          done[i] = true;
          t.completeOffset(OFFSETS[i]);
          assert.equal(t.safe, firstUnfinished(done));
        }
        t.revoke();
      }
    });
  });
}
