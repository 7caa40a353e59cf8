/**
 * Simulation 3, backpressure: a real `ParallelConsumer` over two simulated partitions
 * whose client fetches a batch per partition every few milliseconds. When fetching
 * outruns the handlers, a partition's retained records (running, queued, finished behind
 * an unfinished one) reach the high water mark and the runner pauses it, then resumes it
 * at the low mark; memory held stays bounded by the marks, not by the fetch rate.
 *
 * @module
 */
import { type EngineChoice, ParallelConsumer } from "../core/mod.ts";
import { button, Counters, el, numberInput, sleep } from "./dom.ts";
import { SimBroker, type SimRecord } from "./sim_broker.ts";
import { SimClient } from "./sim_client.ts";

const PARTITIONS = [0, 1];
const RECORD_BYTES = 1024; // a simulated record's payload, for "memory held"

const COUNTERS = [
  ["offered", "fetch could deliver (records/s)"],
  ["fetch-rate", "delivered (records/s)"],
  ["drain-rate", "finished (records/s)"],
  ["pauses-0", "pauses, partition 0"],
  ["pauses-1", "pauses, partition 1"],
  ["max-retained", "most records one partition retained"],
  ["memory", "most payload held (KiB, all partitions)"],
  ["committed", "committed offsets (p0, p1)"],
] as const;

/** Builds the backpressure simulation into `section`. */
export function backpressureSimulation(section: HTMLElement, engine: EngineChoice): void {
  const batch = numberInput("bp-batch", "records per fetch", 50, 1, 1000);
  const interval = numberInput("bp-interval", "fetch every (ms)", 20, 5, 1000);
  const concurrency = numberInput("bp-concurrency", "concurrency", 4, 1, 64);
  const handlerMs = numberInput("bp-handler", "handler time (ms)", 20, 1, 1000);
  const high = numberInput("bp-high", "high water mark", 200, 2, 100_000);
  const low = numberInput("bp-low", "low water mark", 100, 1, 99_999);
  const seconds = numberInput("bp-seconds", "run for (s)", 3, 1, 30);
  const counters = new Counters("bp", COUNTERS);
  const live = el("ul", { class: "partitions", "aria-live": "polite" });
  const meters = PARTITIONS.map((p) => {
    const meter = el("meter", { min: 0, max: 1, value: 0, "aria-label": `partition ${p} retained` });
    const text = el("span", { text: "idle" });
    live.append(el("li", {}, `partition ${p}: `, meter, " ", text));
    return { meter, text };
  });

  const go = button("bp-run", "Run", async () => {
    section.dataset.state = "running";
    const hi = high.read(), lo = Math.min(low.read(), hi - 1);
    const broker = new SimBroker("events", PARTITIONS.length, 20_000, (o) => `k${o % 64}`);
    const client = new SimClient(broker, { member: "A", fetchIntervalMs: interval.read(), batchSize: batch.read(), commitLatencyMs: 5 });
    const ms = handlerMs.read();
    const consumer = new ParallelConsumer<SimRecord>(client, {
      ordering: "unordered",
      concurrency: concurrency.read(),
      highWaterMark: hi,
      lowWaterMark: lo,
      engine,
      handler: () => sleep(ms),
    });
    const pauses = PARTITIONS.map(() => 0);
    let maxRetained = 0, maxTotal = 0;
    consumer.on("pause", (e) => {
      pauses[e.partition]++;
      maxRetained = Math.max(maxRetained, e.retained); // exact at the pause, between the samples below
    });
    await consumer.start();
    client.assign(PARTITIONS);
    const t0 = performance.now();
    while (performance.now() - t0 < seconds.read() * 1000) {
      await sleep(50);
      const m = consumer.metrics();
      maxTotal = Math.max(maxTotal, m.retained);
      for (const p of m.partitions) {
        maxRetained = Math.max(maxRetained, p.retained);
        meters[p.partition].meter.max = hi;
        meters[p.partition].meter.value = Math.min(p.retained, hi);
        meters[p.partition].text.textContent = `${p.retained} retained of ${hi} · lag ${p.lag ?? "–"} · ${p.paused ? "PAUSED" : "fetching"}`;
      }
      const s = (performance.now() - t0) / 1000;
      counters.set("offered", Math.round((batch.read() * PARTITIONS.length * 1000) / interval.read()));
      counters.set("fetch-rate", Math.round(client.fetched / s));
      counters.set("drain-rate", Math.round(m.completed / s));
      PARTITIONS.forEach((p) => counters.set(`pauses-${p}`, pauses[p]));
      counters.set("max-retained", maxRetained);
      counters.set("memory", Math.round((maxTotal * RECORD_BYTES) / 1024));
    }
    await consumer.shutdown();
    counters.set("committed", PARTITIONS.map((p) => broker.committed.get(p)?.offset ?? "–").join(", "));
    for (const m of meters) m.text.textContent += " · stopped";
    section.dataset.state = "done";
  });
  section.append(
    el("div", { class: "controls" }, batch.element, interval.element, concurrency.element, handlerMs.element, high.element, low.element,
      seconds.element, go),
    live,
    counters.element,
  );
}
