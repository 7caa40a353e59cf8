// What the bench report renderers share: the runtimes, rows and scenarios of a run, the
// number formats, and the look-up of a row.

export const RUNTIMES = ["node", "bun", "deno"];
export const ROWS = ["js", "wasm", "wasm-batch", "set-watermark", "deque-map", "sorted-map"];
export const TRACKERS = ["js", "wasm", "wasm-batch"];
export const RATE_SCENARIOS = ["in-order", "random", "slow-head", "gaps-txn", "gaps-compacted", "partitions", "batches", "steady-64"];
export const MEMORY_SCENARIOS = ["memory-dense", "memory-txn", "memory-compacted"];
export const COLORS = { node: "#2e7d32", bun: "#d97706", deno: "#1d4ed8" };

export const fmtInt = (n) => n.toLocaleString("en-US");
export function fmtRate(r) {
  if (r === null || r === undefined) return "—";
  if (r >= 1e6) return `${(r / 1e6).toPrecision(3)} M/s`;
  return `${(r / 1e3).toPrecision(3)} k/s`;
}
export const fmtBytes = (b) => (b === null || b === undefined ? "—" : b < 1 ? b.toFixed(3) : b < 10 ? b.toFixed(2) : b.toFixed(1));
export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms >= 0.01 ? ms.toFixed(3) : ms.toFixed(4));

export function runtimesOf(report) {
  return RUNTIMES.filter((rt) => report.rows.some((r) => r.runtime === rt));
}
export function largest(report, scenario) {
  return Math.max(0, ...report.rows.filter((r) => r.scenario === scenario).map((r) => r.n));
}
export function find(report, runtime, engine, scenario, n = largest(report, scenario)) {
  return report.rows.find((r) => r.runtime === runtime && r.engine === engine && r.scenario === scenario && r.n === n);
}
export const usable = (row) => row && row.ops_per_sec !== null && !String(row.note).startsWith("ERROR");
