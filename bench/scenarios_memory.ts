/**
 * The memory scenarios: bytes per pending record with N registered and none completed,
 * for dense offsets, transaction-marker gaps and a compacted topic.
 *
 * @module
 */
import { feed, type Layout } from "./data.ts";
import { memory } from "./measure.ts";
import { registerAll, type Scenario } from "./scenario_kit.ts";

function memoryScenario(layout: Layout, name: string, about: string): Scenario {
  return {
    name,
    about,
    sizes: (q) => [q ? 1_000_000 : 10_000_000],
    run(make, n, plan) {
      const f = feed(n, layout);
      const firsts = new Float64Array(f.batches.length);
      const warm = make();
      registerAll(warm, feed(1000, layout), new Float64Array(2)); // load the code paths first
      const m0 = memory();
      const l0 = plan.linearMemoryUsed?.() ?? 0;
      const s = make();
      registerAll(s, f, firsts);
      const m1 = memory();
      const grown = plan.linearMemoryUsed ? (plan.linearMemoryUsed() - l0) / n : 0;
      const linear = plan.linearMemoryUsed
        ? `; WASM linear memory used grew ${grown.toFixed(3)} B/record (the allocator's high-water mark; it never shrinks, freed blocks are reused by later trackers)`
        : "";
      const heap = (m1.heap - m0.heap) / n, rss = (m1.rss - m0.rss) / n;
      const reported = s.bytes();
      const held = s.held();
      if (held !== n && s.keys === "handle") throw new Error(`${name}: ${held} records held, expected ${n}`);
      if (s.position() !== f.offsets[0]) throw new Error(`${name}: safe ${s.position()} with nothing completed`);
      const per = reported === undefined ? heap : reported / n;
      const note = reported === undefined
        ? `heap growth ${heap.toFixed(2)} B/record (rss ${rss.toFixed(2)})`
        : `stats().bytes ${(reported / n).toFixed(3)} B/record; heap growth ${heap.toFixed(3)}, rss ${rss.toFixed(3)} B/record${linear}`;
      // The cross-check: what the process grew by — the JS heap for the JS engine, the linear memory used for WASM
      // (the same on every runtime; Bun's heap reading counts WASM memory differently).
      const measured = reported === undefined ? {} : { measured_bytes_per_pending: plan.linearMemoryUsed ? grown : heap };
      return { ops_per_sec: null, bytes_per_pending: Math.max(0, per), note, ...measured };
    },
  };
}

/** Dense offsets. */
export const memDense = memoryScenario("dense", "memory-dense", "bytes per pending record: N registered, none completed, dense offsets");
/** Transaction-marker gaps. */
export const memTxn = memoryScenario("txn", "memory-txn", "bytes per pending record: N registered, none completed, transaction-marker gaps");
/** A gap after every record. */
export const memCompacted = memoryScenario(
  "compacted",
  "memory-compacted",
  "bytes per pending record: N registered, none completed, a gap after every record (compacted)",
);
