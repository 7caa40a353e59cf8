/**
 * Simulation 4, the rebalance gap: member A owns a partition; some of its records are
 * slow on A and ignore their `signal`. An orderly rebalance moves the partition to member
 * B: A's runner stops dispatching, drains for `drainTimeoutMs`, commits, and B reads the
 * commit back, redoes what was unfinished and goes on to later records of the same keys.
 * A slow record still running past the drain bound writes late, after B's newer write of
 * its key: a stale overwrite, unless the table's version guard refuses it. Both members
 * are real `ParallelConsumer`s over {@link SimClient}s of one {@link SimBroker}.
 *
 * @module
 */
import { type EngineChoice, ParallelConsumer, type RecordContext } from "../core/mod.ts";
import { button, checkbox, Counters, el, numberInput, sleep } from "./dom.ts";
import { SimBroker, type SimRecord } from "./sim_broker.ts";
import { SimClient } from "./sim_client.ts";
import { SinkTable } from "./sink_table.ts";

const RECORDS = 60, KEYS = 6, FIRST_SLOW = 24, FAST_MS = 10;

const COUNTERS = [
  ["handover", "committed offset at the handover"],
  ["redone", "records B ran"],
  ["late", "late writes of the old owner (after the partition moved)"],
  ["stale", "stale overwrites"],
  ["refused", "writes the guard refused"],
  ["wrong", "wrong final rows"],
  ["lost", "records no write carried (lost)"],
] as const;

/** Settings of one run. */
interface GapRun {
  guarded: boolean;
  drainMs: number;
  slowMs: number;
  slowCount: number;
  engine: EngineChoice;
  log: (line: string) => void;
}

async function run(o: GapRun): Promise<Record<(typeof COUNTERS)[number][0], number | undefined>> {
  const broker = new SimBroker("accounts", 1, RECORDS, (offset) => `k${offset % KEYS}`);
  const table = new SinkTable(o.guarded);
  let owner: string | undefined, moved = false, late = 0, slowDone = 0, redone = 0;
  let slowStarted!: () => void;
  const trapped = new Promise<void>((r) => (slowStarted = r));
  const handler = (member: string) => async (m: SimRecord, _ctx: RecordContext): Promise<void> => {
    const slow = member === "A" && m.offset >= FIRST_SLOW && m.offset < FIRST_SLOW + o.slowCount;
    if (slow) slowStarted();
    if (member === "B") redone++;
    await sleep(slow ? o.slowMs : FAST_MS); // a slow record ignores its signal, as a handler stuck in I/O would
    if (member === "A" && moved) late++;
    const applied = table.write(m.key, m.value, m.offset, member, owner);
    if (slow) {
      slowDone++;
      o.log(`A's slow record ${m.offset} (${m.key}) wrote ${moved ? "late" : "in time"}: ${applied ? "applied" : "refused by the guard"}`);
    }
  };
  const members = ["A", "B"].map((member) => {
    const client = new SimClient(broker, { member, fetchIntervalMs: 10, batchSize: 10, commitLatencyMs: 5 });
    const consumer = new ParallelConsumer<SimRecord>(client, {
      ordering: "key", concurrency: 8, drainTimeoutMs: o.drainMs, engine: o.engine, handler: handler(member),
    });
    return { client, consumer };
  });
  const [a, b] = members;
  for (const m of members) await m.consumer.start();
  owner = "A";
  a.client.assign([0]);
  await trapped;
  await sleep(20);
  o.log(`rebalance: A stops taking work and drains for ${o.drainMs} ms`);
  await a.client.revoke([0]);
  moved = true;
  const handover = broker.committed.get(0)?.offset;
  o.log(`A committed ${handover ?? "nothing"}; the partition moves to B`);
  owner = "B";
  b.client.assign([0]);
  const t0 = performance.now();
  while ((table.written.size < RECORDS || slowDone < o.slowCount) && performance.now() - t0 < o.slowMs + 10_000) await sleep(20);
  for (const m of members) await m.consumer.shutdown();
  const last = new Map<string, string>();
  for (const r of broker.logs[0]) last.set(r.key, r.value);
  return {
    handover, redone, late, stale: table.staleOverwrites, refused: table.refused, wrong: table.wrongRows(last),
    lost: RECORDS - table.written.size,
  };
}

/** Builds the rebalance-gap simulation into `section`. */
export function rebalanceSimulation(section: HTMLElement, engine: EngineChoice): void {
  const guard = checkbox("gap-guard", "version guard on the table (UPDATE … WHERE version < :offset)", false);
  const drain = numberInput("gap-drain", "drain bound, drainTimeoutMs (ms)", 300, 0, 10_000);
  const slowMs = numberInput("gap-slow-ms", "slow record time on A (ms)", 1000, 1, 10_000);
  const slowCount = numberInput("gap-slow-count", "slow records", 3, 1, KEYS);
  const counters = new Counters("gap", COUNTERS);
  const log = el("ol", { class: "log", "aria-live": "polite" });
  const go = button("gap-run", "Run the rebalance", async () => {
    section.dataset.state = "running";
    log.replaceChildren();
    const result = await run({
      guarded: guard.read(), drainMs: drain.read(), slowMs: slowMs.read(), slowCount: slowCount.read(), engine,
      log: (line) => log.append(el("li", { text: line })),
    });
    for (const [name, value] of Object.entries(result)) counters.set(name, value);
    section.dataset.state = "done";
  });
  section.append(
    el("div", { class: "controls" }, guard.element, drain.element, slowMs.element, slowCount.element, go),
    el("p", { class: "legend", text: `${RECORDS} records of ${KEYS} keys on one partition; records ${FIRST_SLOW}… are slow on A only` }),
    counters.element,
    log,
  );
}
