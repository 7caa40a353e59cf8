/**
 * Simulation 1, dispatch: the same records with the same handler latencies run twice at
 * the same concurrency, once `unordered` (a shared pool) and once with `key` ordering
 * (one record per key in flight, in offset order). Each run is a real `ParallelConsumer`
 * over a {@link SimClient}; a record whose handler finishes while an earlier record of its
 * key is unfinished is a per-key order break.
 *
 * @module
 */
import { type EngineChoice, type Ordering, ParallelConsumer } from "../core/mod.ts";
import { button, Counters, el, numberInput, seeded, sleep } from "./dom.ts";
import { SimBroker, type SimRecord } from "./sim_broker.ts";
import { SimClient } from "./sim_client.ts";

const COUNTERS = [
  ["done", "records finished"],
  ["breaks", "per-key order breaks"],
  ["running", "most handlers running at once"],
  ["ms", "first record → last (ms)"],
  ["committed", "committed offset"],
] as const;

/** One run's outcome, shown in its counters. */
interface RunResult {
  done: number;
  breaks: number;
  maxRunning: number;
  ms: number;
  committed: number | undefined;
}

async function run(
  ordering: Ordering,
  engine: EngineChoice,
  keys: number,
  latency: readonly number[],
  concurrency: number,
  lanes: HTMLElement,
): Promise<RunResult> {
  const n = latency.length;
  const broker = new SimBroker("orders", 1, n, (offset) => `k${offset % keys}`);
  const client = new SimClient(broker, { member: ordering, fetchIntervalMs: 5, batchSize: n, commitLatencyMs: 5 });
  const cells = new Map<number, HTMLElement>();
  lanes.replaceChildren(...Array.from({ length: keys }, (_, k) => {
    const row = el("li", {}, el("span", { class: "lane-key", text: `key k${k}: ` }));
    for (let o = k; o < n; o += keys) {
      const cell = el("span", { class: "cell queued", title: `offset ${o}`, text: `${o}` });
      cells.set(o, cell);
      row.append(cell);
    }
    return row;
  }));
  const finished = new Set<number>();
  let running = 0, maxRunning = 0, breaks = 0;
  const t0 = performance.now();
  const consumer = new ParallelConsumer<SimRecord>(client, {
    ordering,
    concurrency,
    engine,
    handler: async (m) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      cells.get(m.offset)!.className = "cell running";
      cells.get(m.offset)!.textContent = `▶${m.offset}`;
      await sleep(latency[m.offset]);
      running--;
      let broke = false;
      for (let o = m.offset - keys; o >= 0; o -= keys) if (!finished.has(o)) broke = true;
      finished.add(m.offset);
      if (broke) breaks++;
      cells.get(m.offset)!.className = broke ? "cell done broken" : "cell done";
      cells.get(m.offset)!.textContent = broke ? `✗${m.offset}` : `✓${m.offset}`;
    },
  });
  await consumer.start();
  client.assign([0]);
  while (consumer.metrics().completed < n) await sleep(10);
  const ms = Math.round(performance.now() - t0);
  await consumer.shutdown();
  return { done: finished.size, breaks, maxRunning, ms, committed: broker.committed.get(0)?.offset };
}

/** Builds the dispatch simulation into `section`. */
export function dispatchSimulation(section: HTMLElement, engine: EngineChoice): void {
  const concurrency = numberInput("dispatch-concurrency", "concurrency", 8, 1, 64);
  const records = numberInput("dispatch-records", "records", 40, 4, 400);
  const keys = numberInput("dispatch-keys", "keys", 4, 1, 20);
  const maxMs = numberInput("dispatch-latency", "handler time up to (ms)", 80, 1, 1000);
  const modes: Ordering[] = ["unordered", "key"];
  const views = modes.map((mode) => {
    const counters = new Counters(`dispatch-${mode}`, COUNTERS);
    const lanes = el("ul", { class: "lanes", "aria-label": `records by key, ${mode}` });
    const title = mode === "key" ? "key ordering (one record per key in flight)" : "unordered (a shared pool)";
    return { mode, counters, lanes, element: el("div", { class: "half" }, el("h3", { text: title }), counters.element, lanes) };
  });
  const go = button("dispatch-run", "Run both", async () => {
    section.dataset.state = "running";
    const rng = seeded(36);
    const latency = Array.from({ length: records.read() }, () => 1 + Math.floor(rng() * maxMs.read()));
    const results = await Promise.all(views.map((v) => run(v.mode, engine, keys.read(), latency, concurrency.read(), v.lanes)));
    results.forEach((r, i) => {
      const c = views[i].counters;
      c.set("done", r.done);
      c.set("breaks", r.breaks);
      c.set("running", r.maxRunning);
      c.set("ms", r.ms);
      c.set("committed", r.committed);
    });
    section.dataset.state = "done";
  });
  section.append(
    el("div", { class: "controls" }, concurrency.element, records.element, keys.element, maxMs.element, go),
    el("p", { class: "legend", text: "▶ running · ✓ finished in key order · ✗ finished before an earlier record of its key" }),
    el("div", { class: "pair" }, ...views.map((v) => v.element)),
  );
}
