/**
 * The README's broker for a newcomer without Docker: `npm run broker -- --port P --topic
 * NAME:N` (scripts/broker.mjs) starts Kafka on 127.0.0.1:P, creates the topic, prints the
 * address; `npm run produce -- --topic NAME --count K --brokers …` (scripts/produce.mjs)
 * writes K records and refuses a topic that does not exist; SIGTERM stops the broker (exit 0,
 * the port free again). Starts a broker of its own on a free port (not KAFKA_BROKERS').
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { endOffsets } from "../broker/broker.ts";
import { ROOT, watch } from "./pack_project.ts";

const NODE = process.versions.bun || (globalThis as { Deno?: unknown }).Deno ? "node" : process.execPath;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

function produce(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODE, [join(ROOT, "scripts", "produce.mjs"), ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }));
  });
}

test("npm run broker: a broker on the port asked, its topic, records from npm run produce, stopped by SIGTERM", { timeout: 240_000 }, async () => {
  const port = await freePort();
  const child = spawn(NODE, [join(ROOT, "scripts", "broker.mjs"), "--port", String(port), "--topic", "orders:3"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const watched = watch(child, 100000);
  try {
    const t0 = Date.now();
    while (!watched.stdout.includes(`at 127.0.0.1:${port} `)) {
      assert.ok(!watched.done, `the broker command exited before it was up${watched.tail()}`);
      assert.ok(Date.now() - t0 < 180_000, `the broker command printed its address within 180 s${watched.tail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(watched.stderr, /topic orders \(3 partitions\) ready/, watched.tail());
    assert.match(watched.stderr, /auto-creation is off/, watched.tail());
    const brokers = `127.0.0.1:${port}`;

    const made = await produce(["--topic", "orders", "--count", "20", "--brokers", brokers]);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^produced 20 records to orders/);
    const ends = await endOffsets(brokers, "orders");
    assert.equal(ends.size, 3, "three partitions");
    assert.equal([...ends.values()].reduce((s, v) => s + Number(v), 0), 20, "20 records in all");

    const missing = await produce(["--topic", "no-such-topic", "--brokers", brokers]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no topic "no-such-topic"/);
    assert.deepEqual((await endOffsets(brokers, "orders")), ends, "nothing else was written");

    assert.ok(child.pid !== undefined);
    process.kill(child.pid, "SIGTERM");
    const stopped = await new Promise<{ code: number | null; signal: string | null } | undefined>((resolve) => {
      const limit = setTimeout(() => resolve(undefined), 60_000);
      void watched.exited.then((r) => (clearTimeout(limit), resolve(r)));
    });
    assert.deepEqual(stopped, { code: 0, signal: null }, `exit 0 within 60 s of SIGTERM${watched.tail()}`);
    assert.match(watched.stderr, /stopped in/, watched.tail());
    assert.ok(await canBind(port), `port ${port} is free again`);
  } finally {
    if (!watched.done) child.kill("SIGKILL"); // only the child this test started (the broker module's hooks end its JVM)
  }
});
