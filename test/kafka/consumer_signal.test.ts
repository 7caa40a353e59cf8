/**
 * Real broker, real signal: a child process runs a consumer through this runtime's
 * adapter (`consume()` from adapters/node.ts, bun.ts or deno.ts) and gets SIGTERM
 * mid-run. It must finish its running records, commit, leave the group and exit 0 on
 * its own; its final commit covers exactly the records it completed.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { committedOffsets, createTopic, produce, withBroker } from "../broker/broker.ts";
import { asObject, runtime, runtimeCommand, unique } from "./helpers.ts";

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "signal_consumer.ts");

test(`SIGTERM shuts the ${runtime()} adapter down gracefully and the process exits`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("signal");
    const group = unique("signal-group");
    await createTopic(brokers, topic, 3);
    await produce(brokers, topic, Array.from({ length: 20_000 }, (_, i) => ({ key: `k${i % 500}`, value: `${i}` })));

    const [cmd, args] = runtimeCommand(CHILD);
    const child = spawn(cmd, args, {
      env: { ...process.env, KAFKA_BROKERS: brokers, TOPIC: topic, GROUP: group },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "", err = "", signalled = false, signalledAt = 0;
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal }))
    );
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = [...out.matchAll(/^progress (\d+)$/gm)].pop();
      if (!signalled && m && Number(m[1]) >= 1_000) {
        signalled = true;
        signalledAt = Date.now();
        child.kill("SIGTERM");
      }
    });
    let forced = false;
    const kill = setTimeout(() => ((forced = true), child.kill("SIGKILL")), 60_000);
    const { code, signal } = await exited;
    clearTimeout(kill);
    assert.ok(signalled, `the child made progress (stderr: ${err.slice(-2000)})`);
    assert.ok(!forced, `exited by itself after SIGTERM, no SIGKILL needed (stderr: ${err.slice(-2000)})`);
    if (runtime() !== "deno") {
      assert.equal(signal, null, `exited by itself, not killed by the signal (stderr: ${err.slice(-2000)})`);
      assert.equal(code, 0, `exit code 0 (stderr: ${err.slice(-2000)})`);
    }
    // (Deno's node:child_process reports a child it sent kill() to as closed by that
    // signal even when the child handled it and exited 0; the result line below, printed
    // after the graceful shutdown, is the proof there.)
    const line = out.split("\n").find((l) => l.startsWith("result "));
    assert.ok(line, "the child reported its result after the shutdown");
    const { state, completed } = JSON.parse(line.slice("result ".length)) as { state: string; completed: string[] };
    assert.equal(state, "stopped");
    assert.ok(completed.length >= 1_000 && completed.length < 20_000, `stopped mid-run (${completed.length})`);

    const committed = asObject(await committedOffsets(brokers, group, topic));
    let covered = 0;
    for (const p of Object.keys(committed)) covered += Number(committed[p]);
    assert.equal(covered, completed.length, "the final commit covers exactly the completed records");
    for (const id of completed) {
      const [p, o] = id.split(":").map(Number);
      assert.ok(o < Number(committed[p] ?? 0), `${id} is below the commit`);
    }
    console.log(`# signal (${runtime()}): ${completed.length} completed, exited ${Date.now() - signalledAt} ms after SIGTERM`);
  });
});
