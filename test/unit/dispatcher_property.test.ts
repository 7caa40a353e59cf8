// The dispatcher against a reference model (dispatcher_model.ts), in each ordering: random
// deliveries (queued, or started directly as the delivery does: returning at once, in flight,
// or failing), completions, failures and retries on real timers, drains with and without time
// or the records below the highest started offset, stops, removed lanes, user pauses and
// holds. After every operation: under `key` ordering at most one record of a key in flight,
// each key's records started in offset order and only once the record before them settled;
// under `partition` one record of a lane at a time, in offset order; no record started twice;
// a drain starts nothing at or above its mark; what a stop or an abandon drops is exactly the
// model's; the queues hold exactly the queued records and the records between attempts
// (nothing lost, nothing twice); the held keys are exactly those of the records in flight or
// handed on, at most maxInFlightPerPartition of them; the retained count (queued + in flight)
// and the tracker's pending count are the model's; the worker and in-flight bounds hold. At
// the end every record of a lane still dispatching has run. Keys are hashed by a hash that
// collides on purpose (two hashes for all keys) and by the string fallback. A delivery's queued
// records go in as Works or as one run of the batch (ReadyQueue: a record's Work made when it
// is taken). Then the structures under it: HeldKeys against a Map, Fifo and ReadyQueue against
// an array.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Dispatcher, Fifo, type Lane, type Ordering, ReadyQueue, RecordRun, Work } from "../../core/consumer/dispatch/dispatcher.ts";
import type { KeyReader } from "../../core/consumer/dispatch/distinct_keys.ts";
import { HeldKeys } from "../../core/consumer/dispatch/held_keys.ts";
import { Tracker } from "../../core/mod.ts";
import { DispatchModel, type Rec } from "./dispatcher_model.ts";

interface M {
  key: string | undefined;
}
type W = Work<M, Lane<M>>;

const KEYS = ["a", "b", "c", "dd", "eee", undefined];
const LANES = 2;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Op =
  | { kind: "deliver"; lane: number; keys: number[]; direct: boolean; run: boolean; outcomes: ("sync" | "async" | "throw")[] }
  | { kind: "finish" | "fail" | "failForGood"; pick: number }
  | { kind: "tick" | "hold" | "release" }
  | { kind: "drain"; lane: number; time: boolean; keepBelow: boolean }
  | { kind: "stop" | "remove" | "userPause" | "userResume"; lane: number };

const lane = fc.integer({ min: 0, max: LANES - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("deliver" as const),
      lane,
      keys: fc.array(fc.integer({ min: 0, max: KEYS.length - 1 }), { minLength: 1, maxLength: 12 }),
      direct: fc.boolean(),
      run: fc.boolean(),
      outcomes: fc.array(fc.constantFrom("sync" as const, "async" as const, "async" as const, "throw" as const), { minLength: 12, maxLength: 12 }),
    }),
  },
  { weight: 16, arbitrary: fc.record({ kind: fc.constant("finish" as const), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("fail" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("failForGood" as const), pick: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom("tick" as const, "hold" as const, "release" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drain" as const), lane, time: fc.boolean(), keepBelow: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("stop" as const, "remove" as const), lane }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom("userPause" as const, "userResume" as const), lane }) },
) as fc.Arbitrary<Op>;

/** Two hashes for every key (its length's parity): most keys collide, and only the key comparison tells them apart. */
const weak: KeyReader<M> = { keyOf: (m) => m.key, keyHashOf: (m) => (m.key === undefined ? undefined : m.key.length % 2) };
const strings: KeyReader<M> = { keyOf: (m) => m.key };

async function run(ordering: Ordering, reader: KeyReader<M>, concurrency: number, perLane: number, ops: Op[]): Promise<void> {
  const model = new DispatchModel(ordering, LANES);
  // A record's Rec by its lane and offset: a queued record's Work may be made only when it is taken (a run).
  const recs = Array.from({ length: LANES }, () => new Map<number, Rec>());
  const rec = (w: W): Rec => recs[w.lane.partition].get(w.offset)!;
  const workOf = new Map<Rec, W>(); // the Work a started record runs with
  const running: W[] = [];
  const errors: string[] = [];
  const d: Dispatcher<M> = new Dispatcher<M>({ ordering, concurrency, maxInFlightPerPartition: perLane, highWaterMark: 1_000 }, {
    keys: reader,
    start: (w) => {
      const r = rec(w);
      if (w.attempt > 1 && workOf.get(r) !== w) errors.push(`offset ${r.offset} retried with another Work`);
      workOf.set(r, w);
      const lane = w.lane;
      if (lane.state === "stopped" || lane.userPaused || d.held) errors.push(`${r.offset} started in a lane that may not start`);
      if (d.running > concurrency || lane.inFlight > d.options.maxInFlightPerPartition) errors.push("a bound was passed");
      if (w.attempt === 1) {
        const why = model.whyNotFirst(r);
        if (why !== undefined) errors.push(`lane ${r.lane} offset ${r.offset} started: ${why}`);
        model.started(r);
      } else {
        if (r.state !== "waiting") errors.push(`offset ${r.offset} retried while ${r.state}`);
        r.state = "running";
      }
      running.push(w);
    },
    pause: () => {},
    resume: () => {},
  });
  const lanes = Array.from({ length: LANES }, (_, p) => d.addLane("t", p, new Tracker({ engine: "js" })));
  const next = Array.from({ length: LANES }, () => 0);
  const noErrors = (): void => assert.deepEqual(errors, []);
  const drops = (got: readonly W[], want: readonly Rec[], what: string): void => {
    const g = got.map((w) => rec(w));
    assert.equal(new Set(g).size, g.length, `${what}: a record dropped twice`);
    assert.deepEqual(new Set(g), new Set(want), what);
    for (const r of g) if (r.state === "queued") r.state = "dropped";
  };
  const take = (pick: number): W | undefined => (running.length === 0 ? undefined : running.splice(pick % running.length, 1)[0]);
  // The model's view of each lane: its state, whether it ended, its drain's deadline.
  const st = Array.from({ length: LANES }, () => "active" as "active" | "draining" | "stopped");
  const ended = Array.from({ length: LANES }, () => false);
  const untilM = Array.from({ length: LANES }, () => 0);
  const hasTime = (p: number): boolean => !ended[p] && st[p] !== "stopped" && (st[p] === "active" || untilM[p] > Date.now());
  // As RecordRunner: an attempt that succeeded, one that failed (retry, or abandon past a drain's bound).
  const ok = (w: W): void => {
    d.attemptEnded(w);
    rec(w).state = "settled"; // done: settling may start the next record of its key at once
    d.settle(w);
    if (!w.lane.ended) w.lane.tracker.complete(w.handle);
    d.pump();
  };
  const failed = (w: W): void => {
    const r = rec(w);
    assert.equal(d.drainLeft(w.lane) > 0, hasTime(r.lane), "drainLeft");
    if (!hasTime(r.lane)) {
      const want = model.abandonDrops(r);
      r.state = "abandoned";
      drops(d.abandon(w), want, "abandon");
    } else {
      r.state = "waiting";
      d.retryLater(w, 0);
    }
    d.attemptEnded(w);
    d.pump();
  };
  /** A stop of `l` (`call` makes it: stopLane or removeLane), checked against the model's drops. */
  const stop = (l: Lane<M>, state: "draining" | "stopped", until: number, keepBelow: boolean, call: () => W[]): void => {
    const p = l.partition;
    if (st[p] === "active" || state === "stopped") st[p] = state;
    if (state === "draining") untilM[p] = keepBelow ? Math.max(untilM[p], until) : 0; // keeping nothing: no time left
    const noTime = l.userPaused || !hasTime(p);
    const keep = st[p] === "draining" && !l.userPaused && keepBelow ? model.maxStarted[p] : -1;
    const want = model.stopDrops(p, noTime, keep);
    if (noTime) for (const r of model.inState(p, "waiting")) r.state = "abandoned";
    model.mark[p] = Math.min(model.mark[p], st[p] === "stopped" ? -Infinity : keep);
    drops(call(), want, `stop ${state}`);
  };
  const stopLane = (l: Lane<M>, state: "draining" | "stopped", until: number, keepBelow: boolean): void =>
    stop(l, state, until, keepBelow, () => d.stopLane(l, state, until, keepBelow));

  const check = (): void => {
    noErrors();
    let flying = 0;
    for (const l of lanes) {
      const p = l.partition;
      assert.equal(model.overlap(p), undefined);
      flying += model.inState(p, "running").length;
      if (l.ended) continue;
      const queued = model.inState(p, "queued"), between = model.inState(p, "waiting");
      const inFlight = model.inFlight(p);
      assert.equal(l.inFlight, inFlight.length, "in flight");
      assert.equal(l.queued - l.retry.length + l.inFlight, queued.length + inFlight.length, "retained = queued + in flight");
      assert.equal(l.tracker.stats().pending, model.pending(p), "tracker pending");
      // Nothing lost, nothing twice: the queues hold exactly the queued records; retries exactly those between attempts.
      const chains: W[] = [];
      for (const h of l.keys.holders()) for (let w = h.behind; w !== undefined; w = w.behind) chains.push(w);
      assert.equal(l.parked, chains.length, "parked");
      const inQueues = [...l.ready.items(), ...l.unblocked.items(), ...chains].map((w) => rec(w));
      assert.equal(l.ready.length, l.ready.items().length, "ready's length");
      assert.equal(new Set(inQueues).size, inQueues.length, "a record queued twice");
      assert.deepEqual(new Set(inQueues), new Set(queued), "queued records");
      const retrying = [...l.retry.items(), ...l.waiting].map((w) => rec(w));
      assert.deepEqual(new Set(retrying), new Set(between), "records between attempts");
      // The held keys: exactly those of the keyed records in flight or unblocked; bounded by the in-flight bound.
      const holders = new Set(l.keys.holders());
      const want = new Set([...l.unblocked.items(), ...[...workOf].filter(([r]) => r.lane === p && (r.state === "running" || r.state === "waiting") && r.key !== undefined).map(([, w]) => w)]);
      assert.deepEqual(holders, ordering === "key" ? want : new Set(), "held keys");
      assert.equal(l.keys.size, holders.size);
      assert.ok(l.keys.size <= d.options.maxInFlightPerPartition, `${l.keys.size} keys held`);
      assert.equal(l.isIdle, queued.length === 0 && inFlight.length === 0, "idle");
    }
    assert.equal(d.running, flying, "running");
  };

  for (const o of ops) {
    switch (o.kind) {
      case "deliver": {
        const l = lanes[o.lane];
        if (st[o.lane] !== "active" || ended[o.lane]) break;
        const from = next[o.lane];
        const offsets = o.keys.map((_, i) => from + 2 * i); // gaps between offsets
        next[o.lane] = from + 2 * o.keys.length;
        const first = l.tracker.register(offsets, next[o.lane]);
        const messages = o.keys.map((k): M => ({ key: KEYS[k] }));
        const works = messages.map((m, i) => {
          recs[o.lane].set(offsets[i], model.add(o.lane, offsets[i], m.key));
          return new Work<M, Lane<M>>(l, m, offsets[i], first + i, d.keyHash(m));
        });
        let i = 0;
        // As Delivery.#runDirect: records start right here while the dispatcher says they may.
        while (o.direct && i < works.length && d.canStartDirect(l)) {
          const w = works[i], r = rec(w), outcome = o.outcomes[i];
          i++;
          const why = model.whyNotFirst(r);
          if (why !== undefined) errors.push(`offset ${r.offset} started directly: ${why}`);
          model.started(r);
          d.beginDirect(l, w.offset);
          if (outcome === "sync") {
            d.endDirect(l);
            r.state = "settled";
            l.tracker.complete(w.handle);
            continue;
          }
          const kept = d.keepDirect(l, w.message, w.offset, w.handle, w.keyHash);
          workOf.set(r, kept);
          if (outcome === "async") running.push(kept);
          else failed(kept);
        }
        // The rest as the delivery queues it (one run: Works made when taken), or as Works.
        if (i < works.length) o.run ? d.enqueueRun(l, messages, offsets, first, i, works.length) : d.enqueue(l, works.slice(i));
        d.pump();
        break;
      }
      case "finish": {
        const w = take(o.pick);
        if (w) ok(w);
        break;
      }
      case "fail": {
        const w = take(o.pick);
        if (w) failed(w);
        break;
      }
      case "failForGood": { // no retry left: as RecordRunner's stop of the partition (an abandon while no time is left)
        const w = take(o.pick);
        if (!w) break;
        const r = rec(w);
        if (!hasTime(r.lane)) {
          failed(w);
          break;
        }
        const want = model.abandonDrops(r);
        r.state = "abandoned";
        drops(d.abandon(w), want, "abandon");
        stopLane(w.lane, "stopped", 0, true);
        d.attemptEnded(w);
        d.pump();
        break;
      }
      case "tick":
        await sleep(2); // retry timers fire: their records run again
        break;
      case "hold":
        d.held = true;
        break;
      case "release":
        d.held = false;
        d.pump();
        break;
      case "drain": {
        const l = lanes[o.lane];
        if (l.ended) break;
        stopLane(l, "draining", o.time ? Date.now() + 60_000 : 0, o.keepBelow);
        d.pump();
        break;
      }
      case "stop": {
        const l = lanes[o.lane];
        if (!l.ended) stopLane(l, "stopped", 0, true);
        break;
      }
      case "remove": {
        const l = lanes[o.lane];
        if (l.ended) break;
        ended[o.lane] = true; // first, as removeLane: its drain has no time left
        stop(l, "draining", 0, true, () => d.removeLane(l));
        d.pump();
        break;
      }
      case "userPause": { // as UserPause: a draining lane stops what it would still start
        const l = lanes[o.lane];
        if (l.ended || l.userPaused) break;
        l.userPaused = true;
        if (st[o.lane] === "draining") stopLane(l, "draining", 0, true);
        break;
      }
      case "userResume":
        lanes[o.lane].userPaused = false;
        d.pump();
        break;
    }
    check();
  }
  // Everything still dispatching runs to the end.
  d.held = false;
  for (const l of lanes) l.userPaused = false;
  d.pump();
  for (let round = 0; round < 200 && (running.length > 0 || lanes.some((l) => !l.ended && (l.waiting.size > 0 || l.retry.length > 0))); round++) {
    while (running.length > 0) ok(running.shift()!);
    check();
    if (lanes.some((l) => l.waiting.size > 0)) await sleep(2);
  }
  check();
  for (const l of lanes) {
    if (l.ended || l.state === "stopped") continue;
    assert.deepEqual(model.inState(l.partition, "queued", "running", "waiting").map((r) => r.offset), [], `lane ${l.partition} left records behind`);
  }
}

describe("dispatcher against a reference model", () => {
  const cases: [Ordering, string, KeyReader<M>][] = [
    ["key", "colliding key hashes", weak],
    ["key", "keyOf strings", strings],
    ["unordered", "", strings],
    ["partition", "", strings],
  ];
  for (const [ordering, hashes, reader] of cases) {
    test(`${ordering}${hashes ? ` (${hashes})` : ""}: order, no record lost or run twice, bounds, drains, stops`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.array(op, { minLength: 10, maxLength: 80, size: "max" }), async (concurrency, perLane, ops) => {
          await run(ordering, reader, concurrency, perLane, ops);
        }),
        { numRuns: 200 },
      );
    });
  }
});

describe("HeldKeys against a Map", () => {
  type H = { keyHash: number; key: string };
  /** Runs `ops` on a table and a Map side by side, `hash` giving each key's hash; checks them equal after every step. Returns the most keys held at once. */
  const againstMap = (ops: readonly { kind: string; key: number }[], hash: (key: number) => number): number => {
    let most = 0;
    const table = new HeldKeys<H>((a, b) => a.key === b.key);
    const model = new Map<string, H>();
    for (const o of ops) {
      const key = `k${o.key}`;
      const w: H = { key, keyHash: hash(o.key) };
      const held = model.get(key);
      switch (o.kind) {
        case "add":
          if (held === undefined) table.add(w), model.set(key, w);
          break;
        case "take":
          assert.equal(table.take(w), held);
          if (held === undefined) model.set(key, w);
          break;
        case "get":
          assert.equal(table.get(w), held);
          break;
        case "replace":
          if (held !== undefined) {
            const next: H = { key, keyHash: held.keyHash };
            assert.equal(table.replace(held, next), true);
            assert.equal(table.replace(held, next), false, "no longer held");
            model.set(key, next);
          }
          break;
        case "delete":
          assert.equal(table.delete(w), false, "a record that holds nothing");
          if (held !== undefined) assert.equal(table.delete(held), true), model.delete(key);
          break;
      }
      assert.equal(table.size, model.size);
      assert.deepEqual(new Set(table.holders()), new Set(model.values()));
      for (const h of model.values()) assert.equal(table.get({ key: h.key, keyHash: h.keyHash }), h), assert.ok(table.holds(h));
      most = Math.max(most, model.size);
    }
    return most;
  };
  const kind = fc.constantFrom("add", "take", "get", "replace", "delete");

  test("add, take, get, replace, delete with colliding hashes, past its first size", () => {
    const kop = fc.record({ kind, key: fc.integer({ min: 0, max: 40 }) });
    // three hashes for 41 keys: many collisions
    fc.assert(fc.property(fc.array(kop, { maxLength: 200 }), (ops) => void againstMap(ops, (k) => k % 3)), { numRuns: 300 });
  });

  test("the same past 1,024 slots (a thirty-second full below, half above), with spread and with clustered hashes", () => {
    // Mostly takes, so that more than 32 keys are held at once and the table grows past the
    // size where it stops keeping 32 slots a key.
    const grow = fc.record({ kind: fc.constantFrom("take", "take", "take", "add", "get", "replace", "delete"), key: fc.integer({ min: 0, max: 700 }) });
    const spread = (k: number): number => Math.imul(k, 0x2545f491) & 0x3fffffff;
    const clustered = (k: number): number => k % 64; // runs of neighbouring home slots
    let past = 0; // runs that held more than 32 keys at once
    fc.assert(
      fc.property(fc.array(grow, { minLength: 300, maxLength: 1500 }), (ops) => {
        if (againstMap(ops, spread) > 32) past++;
        againstMap(ops, clustered);
      }),
      { numRuns: 20 },
    );
    assert.ok(past > 0, "no run held more than 32 keys: the table never grew past 1,024 slots");
  });
});

describe("Fifo against an array", () => {
  test("push, pushAll, shift, removeIf, clear, items across its growth and its reset", () => {
    const fop = fc.oneof(
      fc.record({ kind: fc.constantFrom("push" as const, "pushAll" as const), n: fc.integer({ min: 1, max: 700 }) }),
      fc.record({ kind: fc.constant("shift" as const), n: fc.integer({ min: 1, max: 700 }) }),
      fc.record({ kind: fc.constantFrom("removeIf" as const, "clear" as const), n: fc.integer({ min: 2, max: 7 }) }),
    );
    fc.assert(
      fc.property(fc.array(fop, { maxLength: 40 }), (ops) => {
        const q = new Fifo<number>();
        let model: number[] = [];
        let next = 0;
        for (const o of ops) {
          if (o.kind === "push") for (let i = 0; i < o.n; i++) q.push(next), model.push(next++);
          else if (o.kind === "pushAll") {
            const items = Array.from({ length: o.n }, () => next++);
            q.pushAll(items);
            model.push(...items);
          }
          else if (o.kind === "shift") for (let i = 0; i < o.n; i++) assert.equal(q.shift(), model.shift());
          else if (o.kind === "removeIf") {
            assert.deepEqual(q.removeIf((x) => x % o.n === 0), model.filter((x) => x % o.n === 0));
            model = model.filter((x) => x % o.n !== 0);
          } else assert.deepEqual(q.clear(), model.splice(0));
          assert.equal(q.length, model.length);
          assert.deepEqual(q.items(), model);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("ReadyQueue against an array", () => {
  test("push, pushAll, pushRun, shift, removeIf, clear, items: the same records in the same order, each Work made right", () => {
    type Q = { key: string };
    const lane = { topic: "t", partition: 0, controller: new AbortController() };
    const hash = (m: Q): number => m.key.length; // a key hash of each record, as under key ordering
    const qop = fc.oneof(
      fc.record({ kind: fc.constantFrom("push" as const, "pushAll" as const, "shift" as const), n: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant("pushRun" as const), n: fc.integer({ min: 0, max: 700 }), from: fc.nat(), hashed: fc.boolean() }),
      fc.record({ kind: fc.constantFrom("removeIf" as const, "clear" as const, "items" as const), n: fc.integer({ min: 2, max: 7 }) }),
    );
    fc.assert(
      fc.property(fc.array(qop, { maxLength: 40 }), (ops) => {
        const q = new ReadyQueue<Q, typeof lane>();
        // The model: what each queued record's Work must hold.
        type R = { message: Q; offset: number; handle: number; keyHash: number };
        let model: R[] = [];
        let next = 0;
        const fresh = (hashed: boolean): R => {
          const message = { key: "k".repeat(1 + (next % 5)) };
          const r = { message, offset: 3 * next, handle: 1_000 + next, keyHash: hashed ? hash(message) : -1 };
          next++;
          return r;
        };
        const view = (w: Work<Q, typeof lane>): R => ({ message: w.message, offset: w.offset, handle: w.handle, keyHash: w.keyHash });
        const asWork = (r: R): Work<Q, typeof lane> => new Work(lane, r.message, r.offset, r.handle, r.keyHash);
        for (const o of ops) {
          if (o.kind === "push") {
            for (let i = 0; i < o.n; i++) {
              const r = fresh(false);
              q.push(asWork(r));
              model.push(r);
            }
          } else if (o.kind === "pushAll") {
            const rs = Array.from({ length: o.n }, () => fresh(false));
            q.pushAll(rs.map(asWork));
            model.push(...rs);
          } else if (o.kind === "pushRun") {
            // A batch of n records whose [from, n) go in as one run (its handles consecutive from the batch's first).
            const from = o.n === 0 ? 0 : o.from % (o.n + 1);
            const rs = Array.from({ length: o.n }, () => fresh(o.hashed));
            q.pushRun(new RecordRun<Q, typeof lane>(lane, rs.map((r) => r.message), rs.map((r) => r.offset), rs.length ? rs[0].handle : 0, from, o.n, o.hashed ? hash : undefined));
            model.push(...rs.slice(from));
          } else if (o.kind === "shift") {
            for (let i = 0; i < o.n; i++) {
              const w = q.shift();
              const r = model.shift();
              assert.deepEqual(w === undefined ? undefined : view(w), r);
              if (w) assert.equal(w.lane, lane);
            }
          } else if (o.kind === "removeIf") {
            const drop = (x: { offset: number }): boolean => (x.offset / 3) % o.n === 0;
            assert.deepEqual(q.removeIf(drop).map(view), model.filter(drop));
            model = model.filter((x) => !drop(x));
          } else if (o.kind === "clear") assert.deepEqual(q.clear().map(view), model.splice(0));
          else assert.deepEqual(q.items().map(view), model);
          assert.equal(q.length, model.length);
        }
        assert.deepEqual(q.items().map(view), model);
      }),
      { numRuns: 300 },
    );
  });
});
