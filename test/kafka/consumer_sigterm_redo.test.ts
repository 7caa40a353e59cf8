/**
 * Real broker, real signal, real next owner: what a member stopped by SIGTERM mid-stream
 * leaves for the next owner to redo (issue 37, item 1).
 *
 * A child process on this runtime (fixtures/sigterm_member.ts: this runtime's adapter
 * `consume()`, ordering `unordered`, concurrency 16, shutdown grace 400 ms) works through
 * 1,800 records whose handler takes 3–8 ms, one in 40 taking 3 s (longer than the grace),
 * and gets SIGTERM mid-stream. It logs every attempt it starts and every record it
 * finishes, and, when the signal arrives, `metrics().running` and the project's redo bound
 * `running + Σ (safe − confirmed) + Σ blocked`. After it exited, a second member of the
 * same group (in this process) consumes until the group's committed offsets reach the end.
 * Twice at once, each in its own group: with the default (eager) commits, and with one
 * commit a minute, where only the shutdown's own commit can cover the stopped member's work
 * (with eager commits the periodic ones cover most of it even without the final commit).
 *
 * Asserted:
 * - nothing the stopped member finished is processed again: with the broker up, the clean
 *   shutdown committed everything it completed (offset and completed set);
 * - the records the next owner processes again (started by the stopped member, not
 *   finished) are at most the records running when the signal came — the ones the grace
 *   cut short — and within the project's bound;
 * - nothing is lost, and the group ends committed at the end offsets.
 *
 * Through each binding this runtime runs (test/kafka/bindings.ts) but Confluent's: KafkaJS
 * (the runtime adapter's `consume()`) on Node, Bun and Deno, and @platformatic/kafka (its
 * `consume()`) on Bun, Deno and the Node 24 run. The next owner goes through the same
 * binding. Confluent's binding has no `consume()` with signal handling (it is not run here).
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`; uses
 * KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { type Binding, bindingsExcept } from "./bindings.ts";
import { runtime, runtimeCommand, sleep, unique, waitFor } from "./helpers.ts";

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "sigterm_member.ts");
const RECORDS = 1_800;
const GRACE_MS = 400;
/** SIGTERM once the child finished this many records. */
const SIGNAL_AFTER = 300;

/** What the stopped member's log says. */
interface MemberLog {
  started: Set<string>;
  finished: Set<string>;
  /** `metrics().running` and the redo bound when SIGTERM arrived. */
  term?: { running: number; bound: number };
  done?: string;
}

function readLog(path: string): MemberLog {
  const out: MemberLog = { started: new Set(), finished: new Set() };
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return out;
  }
  for (const line of text.split("\n")) {
    const [kind, a, b] = line.split(" ");
    if (kind === "S") out.started.add(`${a}:${b}`);
    else if (kind === "F") out.finished.add(`${a}:${b}`);
    else if (kind === "T") out.term = { running: Number(a), bound: Number(b) };
    else if (kind === "D") out.done = a;
  }
  return out;
}

/** One stop-and-handover: the stopped member's log, what the next owner ran, and the exit time. */
async function stopAndHandOver(brokers: string, binding: Binding, commit: "eager" | "interval"): Promise<void> {
  const topic = unique(`sigterm-redo-${binding.name}-${commit}`);
  const group = unique(`sigterm-redo-${binding.name}-${commit}-group`);
  const label = `${runtime()}, ${binding.name}, ${commit} commits`;
  await createTopic(brokers, topic, 3);
  await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % 300}`, value: `${i}`, partition: i % 3 })));
  const dir = mkdtempSync(join(tmpdir(), "offset-frontier-sigterm-"));
  const log = join(dir, "member.log");
  try {
    // The member to stop.
    const [cmd, args] = runtimeCommand(CHILD);
    const child = spawn(cmd, args, {
      env: { ...process.env, KAFKA_BROKERS: brokers, TOPIC: topic, GROUP: group, LOG: log, GRACE_MS: String(GRACE_MS), COMMIT: commit, BINDING: binding.name },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (d) => (err = (err + d).slice(-4_000)));
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    await waitFor(() => gone || readLog(log).finished.size >= SIGNAL_AFTER, 60_000, `${SIGNAL_AFTER} records finished (${label}; stderr: ${err})`);
    assert.ok(!gone, `${label}: the member is still running when signalled (stderr: ${err})`);
    const signalledAt = Date.now();
    process.kill(child.pid!, "SIGTERM");
    const forced = setTimeout(() => process.kill(child.pid!, "SIGKILL"), 30_000);
    await exited;
    clearTimeout(forced);
    const first = readLog(log);
    assert.equal(first.done, "stopped", `${label}: the member shut down gracefully (stderr: ${err})`);
    assert.ok(first.term, `${label}: the member logged its state at the signal`);
    const exitMs = Date.now() - signalledAt;

    // The next owner: a member of the same group through the same binding (it reads the
    // stopped member's completed sets back), until the group committed the end offsets.
    const ends = await endOffsets(brokers, topic);
    const second: string[] = [];
    const next = binding.create({
      brokers,
      groupId: group,
      topics: [topic],
      fromBeginning: true,
      ordering: "unordered",
      concurrency: 16,
      handler: (_m, { partition, offset }) => {
        second.push(`${partition}:${offset}`);
        return Promise.resolve();
      },
    });
    await next.start();
    try {
      let committedEnd = false;
      const t0 = Date.now();
      while (!committedEnd) {
        assert.ok(Date.now() - t0 < 60_000, `${label}: the next owner committed the end offsets within 60 s (${second.length} records so far)`);
        await sleep(200);
        const committed = await committedOffsets(brokers, group, topic);
        committedEnd = [...ends].every(([p, end]) => committed.get(p) === end);
      }
    } finally {
      await next.shutdown();
    }

    const redoneFinished = second.filter((id) => first.finished.has(id));
    const redone = second.filter((id) => first.started.has(id));
    const all = new Set([...first.finished, ...second]);
    const { running, bound } = first.term!;
    console.log(
      `# sigterm redo (${label}): stopped member finished ${first.finished.size}, running at SIGTERM ${running}, ` +
        `bound ${bound}; next owner ran ${second.length}, of them ${redone.length} started before (${redoneFinished.length} finished before); ` +
        `exited ${exitMs} ms after SIGTERM`,
    );
    assert.ok(first.finished.size >= SIGNAL_AFTER && first.finished.size < RECORDS, `${label}: stopped mid-stream (${first.finished.size} finished)`);
    assert.equal(all.size, RECORDS, `${label}: nothing lost, every record finished by one of the two`);
    assert.deepEqual(redoneFinished, [], `${label}: nothing the stopped member finished runs again (its shutdown committed all of it)`);
    assert.ok(running >= 1, `${label}: records were running at the signal (${running})`);
    assert.ok(redone.length <= running, `${label}: the next owner redid ${redone.length} records, at most the ${running} running at SIGTERM`);
    assert.ok(redone.length <= bound, `${label}: within the project's bound (${bound})`);
    assert.equal(new Set(second).size, second.length, `${label}: the next owner ran each record once`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Per binding, two members at once, each in its own group: with the default (eager) commits,
// and with one commit a minute, where only the shutdown's own commit can cover the stopped
// member's work.
for (const binding of bindingsExcept("confluent")) {
  test(`a member SIGTERMed mid-stream on ${runtime()} through ${binding.name} leaves at most its running records to redo`, { timeout: 120_000 }, async () => {
    await withBroker(async (brokers) => {
      const results = await Promise.allSettled([stopAndHandOver(brokers, binding, "eager"), stopAndHandOver(brokers, binding, "interval")]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
    });
  });
}
