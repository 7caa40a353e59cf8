import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, RevokedError, Tracker } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";

for (const engine of ENGINES) {
  describe(`worked example (${engine})`, () => {
    test("start 100, batch [100, 104, 105] next 106", () => {
      const t = new Tracker({ start: 100, engine });
      assert.equal(t.safe, 100);
      const h = t.register([100, 104, 105], 106);
      assert.equal(t.complete(h + 2), Completion.Completed);
      assert.equal(t.safe, 100);
      assert.equal(t.complete(h), Completion.Advanced);
      assert.equal(t.safe, 104);
      assert.equal(t.complete(h + 1), Completion.Advanced);
      assert.equal(t.safe, 106);
      assert.equal(t.complete(h + 1), Completion.Duplicate);
      t.revoke();
      assert.throws(() => t.safe, RevokedError);
      assert.equal(t.complete(h), Completion.Rejected);
      const next = new Tracker({ start: 106, engine });
      next.register([106], 107);
      assert.equal(next.complete(h), Completion.Rejected);
      assert.equal(next.complete(h + 1), Completion.Rejected);
      assert.equal(next.complete(h + 2), Completion.Rejected);
      assert.equal(next.safe, 106);
    });
  });
}
