/**
 * The summaries and checks of `npm run bench:pc` (bench/pc/report.ts): medians ignore failed
 * runs, "faster" means fewer seconds but more records per second, and the thresholds
 * (≥ 10× on no-op records/s, > 1× on the example) sit exactly where the issue puts them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checks, type Row, speedup, summarize, svg, table } from "../../bench/pc/report.ts";

const row = (over: Partial<Row> & Pick<Row, "id" | "group" | "unit" | "runs">): Row => ({
  label: over.id,
  names: { java: "PC", node: "ours" },
  ...over,
});

test("summarize: median of odd and even counts, min and max, failed runs left out", () => {
  assert.deepEqual(summarize([3, null, 1, 2]), { median: 2, min: 1, max: 3, n: 3 });
  assert.deepEqual(summarize([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, n: 4 });
  assert.deepEqual(summarize([null, Number.NaN]), { median: null, min: null, max: null, n: 0 });
});

test("speedup: seconds are Java ÷ Node, rates are Node ÷ Java", () => {
  const secs = row({ id: "e", group: "example", unit: "s", runs: { java: [3, 3, 3], node: [1, 1, 1] } });
  const rate = row({ id: "n", group: "noop", unit: "rec/s", runs: { java: [10, 10, 10], node: [50, 50, 50] } });
  assert.equal(speedup(secs), 3);
  assert.equal(speedup(rate), 5);
  assert.equal(speedup(row({ id: "x", group: "noop", unit: "rec/s", runs: { java: [null], node: [1] } })), null);
});

test("checks: 10× on no-op records/s passes at 10.0 and fails at 9.9; per CPU-second is informational", () => {
  const rs = [
    row({ id: "a", group: "noop", unit: "rec/s", runs: { java: [100], node: [1000] } }),
    row({ id: "b", group: "noop", unit: "rec/s", runs: { java: [100], node: [990] } }),
    row({ id: "c", group: "noop-cpu", unit: "rec/CPU-s", runs: { java: [100], node: [500] } }),
    row({ id: "d", group: "noop", unit: "rec/s", names: { java: "plain Java", node: "plain KafkaJS" }, runs: { java: [1], node: [1] } }),
  ];
  const cs = checks(rs);
  assert.equal(cs.length, 3, "plain clients are baselines, not checks");
  assert.equal(cs[0].pass, true);
  assert.equal(cs[1].pass, false);
  assert.equal(cs[2].informational, true);
  assert.equal(cs[2].pass, false);
});

test("checks: the example needs ours strictly faster; an unmeasured side is a skip, not a pass", () => {
  const cs = checks([
    row({ id: "tie", group: "example", unit: "s", runs: { java: [2], node: [2] } }),
    row({ id: "win", group: "example", unit: "s", runs: { java: [2.01], node: [2] } }),
    row({ id: "none", group: "example", unit: "s", runs: { java: [null], node: [2] } }),
  ]);
  assert.deepEqual(cs.map((c) => c.pass), [false, true, null]);
});

test("table and chart name both sides and every row", () => {
  const rs = [
    row({ id: "example-key-last", label: "key: first → last", group: "example", unit: "s", runs: { java: [0.9, 1.1], node: [0.3, 0.25] } }),
    row({ id: "noop-key-cold", label: "key, cold", group: "noop", unit: "rec/s", runs: { java: [20_000], node: [300_000] } }),
  ];
  const t = table(rs);
  assert.match(t, /example, key: first → last \| PC \| 1\.00 s \(0\.900–1\.10\) \| ours \| 0\.275 s/);
  assert.match(t, /no-op, key, cold \| PC \| 20,000 rec\/s/);
  const s = svg(rs, "h", "s", { example: 10_000, noop: 300_000, noopPartitions: 3 });
  assert.match(s, /^<svg /);
  assert.match(s, /PC: 20,000 rec\/s/);
  assert.match(s, /ours: 300,000 rec\/s/);
  assert.match(s, /10,000 records/);
});
