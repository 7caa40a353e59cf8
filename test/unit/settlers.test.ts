// The settlers (core/consumer/records/settlers.ts): a record whose handler returned a native
// promise borrows a reusable pair of callbacks until its promise settled. Against a model of
// records pending on native promises (plain, rejected, of a subclass) and on thenables that
// misbehave (calling back twice, both ways, late, or throwing from `then`), settled in a random
// order: every record ends exactly once, with its own outcome, never through another record's
// promise, and no more settlers are made than records were pending on native promises at once.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { onSettled, Settlers, thenOf } from "../../core/consumer/records/settlers.ts";

type Kind = "resolve" | "reject" | "subclass" | "twice" | "bothWays" | "thenThrows";
class SubPromise<T> extends Promise<T> {}

interface Rec {
  readonly id: number;
  readonly kind: Kind;
  /** Settles its promise (or calls its thenable back); `undefined` once done. */
  settle?: () => void;
}

describe("settlers", () => {
  test("each record ends once, with its own outcome, whatever order promises settle in; settlers are reused", async () => {
    const kinds: Kind[] = ["resolve", "reject", "subclass", "twice", "bothWays", "thenThrows"];
    const op = fc.oneof(
      fc.record({ kind: fc.constant("start" as const), what: fc.constantFrom(...kinds, "resolve" as const, "resolve" as const) }),
      fc.record({ kind: fc.constant("settle" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("flush" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 120 }), async (ops) => {
        const ended = new Map<number, string[]>();
        const native = (r: Rec): boolean => r.kind === "resolve" || r.kind === "reject" || r.kind === "subclass";
        const end = (r: Rec, how: string): void => {
          if (native(r) && !ended.has(r.id)) nativePending--; // its settler is free once it was called back
          ended.set(r.id, [...(ended.get(r.id) ?? []), how]);
        };
        let nativePending = 0, peak = 0; // records on native promises not called back yet
        const settlers = new Settlers<Rec>({ ok: (r) => end(r, "ok"), failed: (r, e) => end(r, `failed ${String(e)}`) });
        const pending: Rec[] = [];
        const all: Rec[] = [];
        const start = (what: Kind): void => {
          const r: Rec = { id: all.length, kind: what };
          all.push(r);
          let result: PromiseLike<unknown>;
          if (what === "resolve" || what === "reject" || what === "subclass") {
            const C = what === "subclass" ? SubPromise : Promise;
            result = new C<void>((ok, no) => {
              r.settle = () => (what === "reject" ? no(`e${r.id}`) : ok());
            });
            peak = Math.max(peak, ++nativePending); // a subclass's then is the intrinsic one too
          } else if (what === "thenThrows") {
            result = { then: () => { throw `e${r.id}`; } };
          } else {
            // A thenable that calls back twice (ok, ok) or both ways (ok, then failed), when settled.
            result = {
              then: (ok: (v: unknown) => void, no: (e: unknown) => void) => {
                r.settle = () => {
                  ok(undefined);
                  if (what === "twice") ok(undefined);
                  else no(`late ${r.id}`);
                };
              },
            } as PromiseLike<unknown>;
          }
          settlers.watch(r, result, result.then);
          if (what !== "thenThrows") pending.push(r);
        };
        for (const o of ops) {
          if (o.kind === "start") start(o.what);
          else if (o.kind === "settle" && pending.length > 0) {
            const r = pending.splice(o.pick % pending.length, 1)[0];
            r.settle?.();
            r.settle = undefined;
          } else await new Promise((res) => setTimeout(res, 0)); // callbacks run
        }
        for (const r of pending.splice(0)) r.settle?.();
        await new Promise((res) => setTimeout(res, 0));
        for (const r of all) {
          const want = r.kind === "reject" ? `failed e${r.id}` : r.kind === "thenThrows" ? `failed e${r.id}` : "ok";
          assert.deepEqual(ended.get(r.id), [want], `record ${r.id} (${r.kind})`);
        }
        assert.ok(settlers.made <= peak, `${settlers.made} settlers made for at most ${peak} records pending at once`);
      }),
      { numRuns: 300 },
    );
  });

  // The traced and exactly-once attempts settle through onSettled (their callbacks carry a span
  // or staged outputs): the same guard as the pooled path's.
  test("onSettled: one end per attempt, the first one, whatever the thenable does", async () => {
    const cases: Array<[string, PromiseLike<unknown> | (() => PromiseLike<unknown>), "ok" | "failed"]> = [
      ["resolved", Promise.resolve(1), "ok"],
      ["rejected", () => Promise.reject(new Error("no")), "failed"], // made when watched: never unhandled
      ["subclass", SubPromise.resolve(1), "ok"],
      ["twice", { then: (ok: (v: unknown) => void) => (ok(1), ok(2)) } as PromiseLike<unknown>, "ok"],
      ["both ways", { then: (ok: (v: unknown) => void, no: (e: unknown) => void) => (ok(1), no(2)) } as PromiseLike<unknown>, "ok"],
      ["fails, then ok", { then: (ok: (v: unknown) => void, no: (e: unknown) => void) => (no(1), ok(2)) } as PromiseLike<unknown>, "failed"],
      ["then throws", { then: () => { throw new Error("then"); } } as unknown as PromiseLike<unknown>, "failed"],
      ["calls back, then throws", { then: (ok: (v: unknown) => void) => { ok(1); throw new Error("late"); } } as unknown as PromiseLike<unknown>, "ok"],
    ];
    for (const [name, made, expected] of cases) {
      const result = typeof made === "function" ? made() : made;
      const ends: string[] = [];
      const then = thenOf(result);
      assert.ok(then !== undefined, name);
      onSettled(result, then, () => ends.push("ok"), () => ends.push("failed"));
      await new Promise((r) => setTimeout(r, 0));
      assert.deepEqual(ends, [expected], name);
    }
    assert.equal(thenOf(null), undefined);
    assert.equal(thenOf({ then: 1 }), undefined);
    assert.equal(thenOf(5), undefined);
  });
});
