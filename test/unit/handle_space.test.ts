// The handle space: a slice is held by one live tracker at a time, and a tracker that
// reuses a slice starts above every handle an earlier holder issued, so a stale handle of
// a revoked tracker is never accepted by a later one — however many trackers the process
// has made (the old scheme wrapped after 2^20 − 1 trackers and reused slices from 0).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Completion, HandleSpaceError, Tracker } from "../../core/mod.ts";
import { HandleSpace, SLICE } from "../../core/tracker/handle_space.ts";
import { ENGINES } from "./engines.ts";

const sliceOf = (handle: number): number => Math.floor(handle / SLICE);

describe("handle space", () => {
  test("a slice given back is reused above its floor; exhaustion is a typed error", () => {
    const space = new HandleSpace(3, 10);
    const a = space.acquire(), b = space.acquire(), c = space.acquire();
    assert.deepEqual([a.tag, b.tag, c.tag], [1, 2, 3]);
    assert.deepEqual([a.base, b.base, c.base], [SLICE, 2 * SLICE, 3 * SLICE]);
    assert.equal(space.available, 0);
    assert.throws(() => space.acquire(), (e) => e instanceof HandleSpaceError && /all 3 are held/.test(e.message));
    b.end = b.base + 4; // b issued 4 handles
    space.release(b);
    space.release(b); // idempotent: given back once
    assert.equal(space.available, 1);
    const d = space.acquire();
    assert.equal(d.tag, 2);
    assert.equal(d.base, 2 * SLICE + 4); // above b's handles
    d.end = d.base + 7; // floor 11 > 10: retired
    space.release(d);
    assert.equal(space.available, 0);
    assert.throws(() => space.acquire(), HandleSpaceError);
    a.end = a.base + 10; // floor 10: still reusable
    space.release(a);
    assert.equal(space.acquire().base, SLICE + 10);
  });

  for (const engine of ENGINES) {
    test(`${engine}: a tracker on a reused slice rejects every handle of the slice's earlier holder`, () => {
      const old = new Tracker({ engine, start: 0, capacity: 64 });
      const first = old.register([0, 1, 2, 3, 4], 5);
      old.complete(first + 1);
      old.revoke();
      // Slices given back are reused oldest first: make trackers (kept live, so each
      // holds its own slice) until one lands on the old tracker's slice.
      const held: Tracker[] = [];
      let later: Tracker | undefined, base = 0;
      for (let i = 0; i < 1_000_000 && later === undefined; i++) {
        const t = new Tracker({ engine, start: 0, capacity: 64 });
        const h = t.register([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 10);
        if (sliceOf(h) === sliceOf(first)) (later = t), (base = h);
        else held.push(t);
      }
      assert.ok(later, "the old tracker's slice was reused");
      assert.ok(base >= first + 5, `the later tracker starts above the old handles (${base - first})`);
      for (let k = 0; k < 5; k++) assert.equal(later.complete(first + k), Completion.Rejected, `old handle ${k}`);
      assert.equal(later.safe, 0);
      for (let k = 0; k < 10; k++) assert.equal(later.complete(base + k), Completion.Advanced, `new handle ${k}`);
      assert.equal(later.safe, 10);
      for (const t of held) t.revoke();
      later.revoke();
    });
  }

  test("live trackers hold distinct slices", () => {
    const live = Array.from({ length: 200 }, () => new Tracker({ engine: "js", start: 0, capacity: 8 }));
    const firsts = live.map((t) => t.register([0], 1));
    assert.equal(new Set(firsts.map(sliceOf)).size, live.length);
    // A handle of one is rejected by every other.
    for (let i = 1; i < live.length; i++) assert.equal(live[i].complete(firsts[i - 1]), Completion.Rejected);
    for (const t of live) t.revoke();
  });
});
