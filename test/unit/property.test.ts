import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Completion, InvalidOffsetError, type OffsetInput, Tracker, type TrackerStats } from "../../core/mod.ts";
import { ENGINES } from "./engines.ts";
import { Model } from "./model.ts";

type Form = "number" | "bigint" | "string";
type Op =
  | { kind: "register"; startDelta: number; deltas: number[]; tail: number; forms: Form[] }
  | { kind: "complete"; pick: number; flavour: "issued" | "near" | "foreign" | "fraction" | "nan" | "negative" }
  | { kind: "completeOffset"; pick: number; shift: number }
  | { kind: "completeMany"; picks: number[] }
  | { kind: "revoke" };

const gap = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 2, arbitrary: fc.integer({ min: 2, max: 3 }) }, // transaction markers
  { weight: 1, arbitrary: fc.integer({ min: 4, max: 1_000_000 }) }, // compaction
);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("register" as const),
      startDelta: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 5 }) }, { weight: 1, arbitrary: fc.integer({ min: -3, max: -1 }) }),
      deltas: fc.array(fc.oneof({ weight: 20, arbitrary: gap }, { weight: 1, arbitrary: fc.integer({ min: -1, max: 0 }) }), { maxLength: 24 }),
      tail: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.integer({ min: -1, max: 0 }) }),
      forms: fc.array(fc.constantFrom<Form>("number", "bigint", "string"), { minLength: 26, maxLength: 26 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("complete" as const),
      pick: fc.nat(),
      flavour: fc.constantFrom("issued", "issued", "issued", "near", "foreign", "fraction", "nan", "negative"),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("completeOffset" as const), pick: fc.nat(), shift: fc.integer({ min: -2, max: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("completeMany" as const), picks: fc.array(fc.nat(), { maxLength: 12 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "revoke" as const }) },
) as fc.Arbitrary<Op>;

function form(o: number, f: Form): OffsetInput {
  return f === "bigint" ? BigInt(o) : f === "string" ? String(o) : o;
}

/** The stats the model can predict (ages and bytes aside). */
function observable(t: Tracker): Omit<TrackerStats, "engine" | "bytes" | "oldestPendingAgeMs" | "capacity"> | "revoked" {
  if (t.revoked) return "revoked";
  const { engine: _e, bytes: _b, oldestPendingAgeMs: _a, capacity: _c, ...rest } = t.stats();
  return rest;
}

function expected(m: Model): ReturnType<typeof observable> {
  if (m.revoked) return "revoked";
  const retained = m.retained(), blocked = m.blocked(), safe = m.safe();
  return {
    pending: retained - blocked,
    blocked,
    retained,
    oldestPendingOffset: retained - blocked > 0 ? safe : undefined,
    safe,
    delivered: m.next,
  };
}

function errorName(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as Error).constructor.name;
  }
}

for (const engine of ENGINES) {
  describe(`tracker against the reference model (${engine})`, () => {
    test("random batches with gaps, random completions, duplicates, stale/foreign handles, capacity", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 1_000_000 }),
          fc.integer({ min: 1, max: 64 }),
          fc.array(op, { maxLength: 80 }),
          (start, capacity, ops) => {
            const t = new Tracker({ start, capacity, engine });
            const other = new Tracker({ start: 0, engine });
            const foreign = other.register([0, 1, 2], 3);
            const base = t.register([], start); // an empty batch at the start changes nothing, returns the base handle
            const m = new Model(start, capacity);
            const stale = new Tracker({ start, engine });
            const staleBase = stale.register([start], start + 1);
            stale.revoke();
            for (const o of ops) {
              const before = observable(t);
              switch (o.kind) {
                case "register": {
                  const floor = m.next ?? 0;
                  let cur = floor + o.startDelta;
                  const offsets: number[] = [];
                  for (const d of [0, ...o.deltas]) {
                    cur += d;
                    offsets.push(cur);
                  }
                  const next = cur + o.tail;
                  const want = m.revoked ? "RevokedError" : offsets.some((x) => x < 0) ? "InvalidOffsetError" : undefined;
                  const inputs = offsets.map((x, i) => (x < 0 ? x : form(x, o.forms[i])));
                  let got: number | undefined;
                  const err = errorName(() => (got = t.register(inputs, next)));
                  const model = want ?? m.register(offsets, next);
                  if (typeof model === "string") {
                    assert.equal(err, model, `register ${offsets} next ${next}`);
                    assert.deepEqual(observable(t), before, "a refused batch changes nothing");
                  } else {
                    assert.equal(err, undefined);
                    assert.equal(got, base + model);
                  }
                  break;
                }
                case "complete": {
                  const n = m.offsets.length;
                  const idx = o.flavour === "near" ? (o.pick % (n + 4)) - 2 : n === 0 ? 0 : o.pick % n;
                  let handle: number;
                  let want: Completion;
                  switch (o.flavour) {
                    case "foreign":
                      handle = foreign + (o.pick % 3);
                      want = Completion.Rejected;
                      break;
                    case "fraction":
                      handle = base + idx + 0.5;
                      want = Completion.Rejected;
                      break;
                    case "nan":
                      handle = NaN;
                      want = Completion.Rejected;
                      break;
                    case "negative":
                      handle = -1 - idx;
                      want = Completion.Rejected;
                      break;
                    default:
                      handle = base + idx;
                      want = m.complete(idx);
                  }
                  if (o.flavour === "issued" && o.pick % 7 === 0) {
                    assert.equal(t.complete(staleBase), Completion.Rejected, "stale handle of an earlier assignment");
                  }
                  assert.equal(t.complete(handle), want, `${o.flavour} handle index ${idx}`);
                  break;
                }
                case "completeOffset": {
                  const n = m.offsets.length;
                  const offset = (n === 0 ? start : m.offsets[o.pick % n]) + o.shift;
                  if (offset < 0) {
                    assert.throws(() => t.completeOffset(offset), InvalidOffsetError);
                  } else {
                    assert.equal(t.completeOffset(String(offset)), m.completeOffset(offset), `offset ${offset}`);
                  }
                  break;
                }
                case "completeMany": {
                  const n = m.offsets.length;
                  const idxs = o.picks.map((p) => (p % (n + 2)) - 1);
                  let added = 0;
                  for (const i of idxs) if (m.complete(i) >= Completion.Completed) added++;
                  assert.equal(t.completeMany(idxs.map((i) => base + i)), added);
                  break;
                }
                case "revoke":
                  t.revoke();
                  m.revoked = true;
                  break;
              }
              assert.deepEqual(observable(t), expected(m));
              if (!t.revoked) {
                assert.equal(t.safe, m.safe());
                assert.equal(t.delivered, m.next);
              }
            }
            other.revoke();
            t.revoke();
          },
        ),
        { numRuns: 300 },
      );
    });

    test("an unknown start is taken from the first batch", () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** 53 - 100 }), fc.integer({ min: 1, max: 50 }), (first, span) => {
          const t = new Tracker({ engine });
          assert.equal(t.safe, undefined);
          assert.equal(t.delivered, undefined);
          assert.equal(t.completeOffset(first), Completion.Rejected);
          const h = t.register([first, first + span], first + span + 1);
          assert.equal(t.safe, first);
          assert.equal(t.complete(h + 1), Completion.Completed);
          assert.equal(t.complete(h), Completion.Advanced);
          assert.equal(t.safe, first + span + 1);
          t.revoke();
        }),
        { numRuns: 200 },
      );
    });
  });
}
