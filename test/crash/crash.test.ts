/**
 * Crash recovery against a real broker: the demo's experiment (demo/run.ts) with real
 * SIGKILLs, fewer records, several runs.
 *
 * Each run, for each strategy: a one-partition topic of 400 records; a consumer child
 * process (4 workers × 5 ms per record) SIGKILLed 250 ms after its first finished record
 * (counted from the first arrival, a clean-clone `npm test` at load 20 once killed a
 * consumer that had finished nothing, failing "finished before the kill"); a
 * replacement in the same group that runs until every record is accounted for. Records
 * are counted from the two processes' fsynced finished logs.
 *
 * - frontier (offset-frontier's runner): loses nothing in any run, and redoes at most
 *   what its runner reported at the crash: records running plus records finished but
 *   not covered by the last acknowledged commit;
 * - naive (KafkaJS auto-commit + work queue): the harness must catch it losing records
 *   in at least one run (3 runs, up to 8 until it does), or it could not see loss.
 *
 * Node only (the consumers are Node child processes). Uses KAFKA_BROKERS when set (see
 * `npm run test:crash`), else starts and stops its own broker.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { withBroker } from "../broker/broker.ts";
import { runDemo } from "../../demo/run.ts";
import type { DemoResult } from "../../demo/report.ts";

const RECORDS = 400;
const KILL_AFTER_MS = 250;
const MIN_RUNS = 3;
const MAX_RUNS = 8;

describe("crash recovery: SIGKILL a consumer mid-work, replace it in the same group", () => {
  let result: DemoResult;

  before(async () => {
    result = await withBroker((brokers) =>
      runDemo(brokers, {
        records: RECORDS,
        killAfterMs: KILL_AFTER_MS,
        killFromFirstFinished: true,
        runs: MAX_RUNS,
        timeoutMs: 45_000,
        progress: (line) => console.error(line),
        // Stop after MIN_RUNS once the naive strategy was caught losing records.
        afterRun: (run, trials) => !(run >= MIN_RUNS && trials.some((t) => t.strategy === "naive" && t.lost > 0)),
      })
    );
  }, { timeout: 300_000 });

  test(`both strategies ran at least ${MIN_RUNS} times, every replacement finished`, () => {
    assert.ok(result.runs >= MIN_RUNS, `only ${result.runs} runs`);
    for (const s of ["naive", "frontier"] as const) {
      assert.equal(result[s].trials.length, result.runs, `${s}: ${result[s].trials.length} trials`);
      for (const t of result[s].trials) {
        assert.equal(t.timedOut, false, `${s} run ${t.run}: the replacement timed out`);
        assert.ok(t.finishedBeforeCrash > 0, `${s} run ${t.run}: nothing finished before the kill`);
        assert.ok(t.finishedBeforeCrash < RECORDS, `${s} run ${t.run}: everything finished before the kill`);
      }
    }
  });

  test("frontier: no record is lost in any run", () => {
    assert.deepEqual(result.frontier.lost, result.frontier.trials.map(() => 0));
  });

  test("frontier: the commit at the crash never passes unfinished work", () => {
    for (const t of result.frontier.trials) {
      if (t.committedAtCrash === null) continue; // no commit yet: the replacement redoes from 0
      assert.ok(
        t.committedAtCrash <= t.highestFinished + 1,
        `run ${t.run}: committed ${t.committedAtCrash} but the highest finished record is ${t.highestFinished}`,
      );
    }
  });

  test("frontier: redone records ≤ in flight + finished after the last confirmed commit (runner's figures)", () => {
    for (const t of result.frontier.trials) {
      // No state line: the killed process finished nothing, so it can have redone nothing.
      const r = t.runner ?? { running: 0, finishedAfterConfirmed: 0, confirmed: null, bound: 0 };
      assert.ok(
        t.duplicates <= r.bound,
        `run ${t.run}: ${t.duplicates} processed twice, but the runner reported ${r.running} running + ` +
          `${r.finishedAfterConfirmed} finished after the confirmed commit ${r.confirmed}`,
      );
    }
  });

  test("naive: the harness catches auto-commit losing records (it can see loss)", () => {
    const lossy = result.naive.trials.filter((t) => t.lost > 0);
    assert.ok(lossy.length > 0, `naive lost nothing in ${result.runs} runs: ${JSON.stringify(result.naive.lost)}`);
    // …because it committed past records that had not finished.
    assert.ok(
      lossy.some((t) => t.committedAtCrash !== null && t.committedAtCrash > t.highestFinished + 1),
      "no lossy run committed past its highest finished record",
    );
  });
});
