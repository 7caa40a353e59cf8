// A Work keeps the fields few records need (a retry's wait, the stuck watch, a dead letter, the
// last error) outside itself until one is first given a value (core/consumer/dispatch/work.ts).
// Against a plain object: any sequence of writes and reads of those fields, in any order,
// reads back what was last written, and the record's signal is its own controller's once it
// has one, its lane's before.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Work } from "../../core/consumer/dispatch/work.ts";

const FIELDS = ["timer", "error", "due", "then", "startedAt", "controller", "givenUp", "deadLettering"] as const;
type Field = typeof FIELDS[number];
const DEFAULTS: Record<Field, unknown> = {
  timer: undefined, error: undefined, due: 0, then: undefined, startedAt: 0, controller: undefined, givenUp: false, deadLettering: false,
};

describe("Work's rare fields", () => {
  test("read back what was last written, in any order; the signal follows the controller", () => {
    const lane = { topic: "t", partition: 0, controller: new AbortController() };
    const timer = setTimeout(() => {}, 0);
    clearTimeout(timer);
    const values: Record<Field, unknown[]> = {
      timer: [undefined, timer],
      error: [undefined, new Error("x"), 0, null],
      due: [0, 5, Date.now()],
      then: [undefined, () => {}],
      startedAt: [0, 7],
      controller: [undefined, new AbortController()],
      givenUp: [false, true],
      deadLettering: [false, true],
    };
    const op = fc.record({ field: fc.constantFrom(...FIELDS), write: fc.boolean(), pick: fc.nat() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const w = new Work(lane, "m", 3, 1_000, -1);
        const fields = w as unknown as Record<Field, unknown>;
        const model: Record<Field, unknown> = { ...DEFAULTS };
        for (const o of ops) {
          if (o.write) {
            const v = values[o.field][o.pick % values[o.field].length];
            fields[o.field] = v;
            model[o.field] = v;
          }
          for (const f of FIELDS) assert.equal(fields[f], model[f], f);
          const controller = model.controller as AbortController | undefined;
          assert.equal(w.signal, controller?.signal ?? lane.controller.signal, "signal");
        }
      }),
      { numRuns: 500 },
    );
  });
});
