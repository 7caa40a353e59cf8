// bench:consumer's arithmetic (bench/consumer_results.ts): processes pooled, a table's rows,
// and the async ÷ sync pairs overall and per process, on results made by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { paired, pool, rows } from "../../bench/consumer_results.ts";
import type { Rate, RunResult } from "../../bench/consumer_run.ts";

const rate = (cpu: number, wall = cpu): Rate => ({ wall, cpu, commits: 1 });
/** One process: per round, key at `sync` and key-async at `async` records per CPU-second, plain at 100. */
function run(pairs: Array<[number, number]>, stalledRound?: number): RunResult {
  return {
    runtime: "node",
    client: "kafkajs",
    clientVersion: "x",
    version: "x",
    rounds: pairs.map(([sync, async]) => ({ plain: rate(100), key: rate(sync), "key-async": rate(async) })),
    stalls: stalledRound === undefined ? [] : [{ round: stalledRound, variant: "key", error: "stalled" }],
    loadAverage: { before: [pairs.length], after: [pairs.length + 1] },
  };
}

test("processes pooled: rounds in turn, stalls renumbered, load from the first and the last", () => {
  const a = run([[100, 90], [100, 80]]), b = run([[100, 70], [100, 60], [100, 50]], 2);
  const p = pool([a, b]);
  assert.equal(p.rounds.length, 5);
  assert.deepEqual(p.processRounds, [2, 3]);
  assert.deepEqual(p.stalls.map((x) => x.round), [4]);
  assert.deepEqual(p.loadAverage, { before: [2], after: [4] });
  assert.equal(pool([a]), a); // one process: as it was, no processRounds
});

test("pairs: the pooled median and range, and each process's own median", () => {
  const p = pool([run([[100, 90], [100, 80]]), run([[100, 70], [100, 60], [100, 50]])]);
  const key = paired(p).key!;
  assert.equal(key.medianCpuRatio, 0.7);
  assert.deepEqual([key.min, key.max], [0.5, 0.9]);
  assert.deepEqual(key.processMedians, [0.85, 0.6]);
  assert.equal(paired(p).unordered, undefined); // never ran both ways
  assert.equal(paired(run([[100, 90]])).key!.processMedians, undefined);
});

test("rows: medians over the rounds and the ratio to the baseline's", () => {
  const r = rows(run([[200, 90], [400, 80], [300, 70]]), [{ variant: "plain", name: "p" }, { variant: "key", name: "k" }], "plain");
  assert.equal(r[1].medianRecordsPerCpuSec, 300);
  assert.deepEqual(r[1].ratioToPlain, { wall: 3, cpu: 3 });
  assert.equal(r[0].name, "plain eachBatch, no commits");
});
