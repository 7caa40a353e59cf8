#!/usr/bin/env node
// The test command (`npm test`): type-check, lint, the WASM bytes check, the unit suite on
// Node, Bun and Deno, then the integration suites against a real broker. Every step must
// pass, and every test step must report a passing count above zero (Node 20's
// `node --test` exits 0 when it finds no test). Steps whose npm script does not exist
// yet are skipped with a notice.
//
// Steps overlap (a 2-core machine spends most of a real-broker suite waiting on timers,
// rebalances and the broker), in four lanes that start together:
// - checks and units: typecheck, lint, check:wasm, the unit suite on Node, Bun, Deno, then
//   the docs/ pages' examples from the packed tarball and `npm run broker` (test:docs),
//   then part of test:kafka on the pinned Node 22 for the @platformatic/kafka binding;
// - kafka node: the real-broker suite (test:kafka) on Node, the longest step, as soon as
//   Confluent's client is built (it runs through both bindings);
// - broker A: test:kafka on Bun and Deno;
// - broker B: the quick starts (test:pack), test:crash, test:gap, then test:chaos (whose round starts a broker of its
//   own: it SIGKILLs and restarts it), test:browser (the playground in headless Chromium,
//   installed in the background from the start; skipped, saying why, where it cannot be
//   installed), then test:kafka on the pinned Node 24 for the @platformatic/kafka binding.
// One broker (test/broker/broker.ts) serves every real-broker step: it starts at once, in
// the background, and each step gets it as KAFKA_BROKERS (topics and groups are unique per
// test). When `@confluentinc/kafka-javascript` is not built yet (a fresh clone: ~3 min of
// C/C++), its build starts at once too, in the background, and only the Node run of
// test:kafka waits for it. A step's output is printed whole when it ends (steps run side by
// side); `npm run <step>` runs one step alone, with its own broker.
//
// At the end: every step's seconds (the slowest first), the lanes' wall time, the failed
// tests by name with the first line of their errors (scripts/test-output.mjs), and the total.
// A step that runs past 25 minutes (OFFSET_FRONTIER_STEP_MINUTES) is ended and fails.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";
import { parseCli, usageError } from "./cli.mjs";
import { counts, failedTests } from "./test-output.mjs";

const scripts = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts;
const ALL = ["typecheck", "lint", "check:wasm", "test:node", "test:bun", "test:deno", "test:kafka", "test:pack", "test:docs", "test:crash", "test:gap", "test:chaos", "test:browser"];
const { positionals: only } = parseCli({
  name: "test",
  usage: `usage: npm test [-- STEP ...]      (node scripts/test.mjs [STEP ...])

Every step (or only those named): ${ALL.join(", ")}.
Each must pass; each test step must report a passing count above zero. Steps run in
four overlapping lanes against one shared broker; the summary lists every step's
seconds, slowest first, and the total.`,
  positionals: true,
});
const unknownStep = only.find((s) => !ALL.includes(s));
if (unknownStep !== undefined) usageError("test", `unknown step ${JSON.stringify(unknownStep)}; steps are ${ALL.join(", ")}`);
const wanted = (script) => only.length === 0 || only.includes(script);

const T0 = Date.now();
const secs = (ms) => (ms / 1000).toFixed(1);
const at = () => `+${secs(Date.now() - T0)}s`;
const children = new Set();

/**
 * No step may take longer (OFFSET_FRONTIER_STEP_MINUTES, default 25): a hung step (a test
 * file whose process never ends) is ended with its whole process group and fails, printing
 * what it wrote, instead of holding the run until the CI's own limit kills it unexplained.
 */
const STEP_MS = Number(process.env.OFFSET_FRONTIER_STEP_MINUTES ?? 25) * 60_000;

/** Sends `sig` to a step's process group (each step runs in its own). */
function signalGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch {
    // gone
  }
}

/** Runs a command to its end (or STEP_MS), collecting its output (printed by the caller). */
function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env }, detached: true });
    children.add(child);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", (e) => (out += `\n${e.message}\n`));
    const overdue = setTimeout(() => {
      out += `\n=== test: this step ran past ${STEP_MS / 60_000} minutes; its process group is ended ===\n`;
      signalGroup(child, "SIGTERM");
      setTimeout(() => signalGroup(child, "SIGKILL"), 10_000).unref();
    }, STEP_MS);
    child.on("close", (code, signal) => {
      clearTimeout(overdue);
      children.delete(child);
      resolve({ code: code ?? 1, signal, out });
    });
  });
}

// Ctrl-C: end the steps (each in its own process group); broker.ts's exit hook SIGKILLs the shared broker.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    for (const c of children) signalGroup(c, sig);
    process.exit(sig === "SIGINT" ? 130 : 143);
  });
}

const summary = []; // { name, line, ms }
const failures = []; // "step: test — why", printed last so that a log's tail names them
let failed = false, totalPass = 0, totalFail = 0;

/**
 * One step: `npm run <script>` (or `command`), its output printed whole when it ends, its
 * seconds and counts recorded. `wait` resolves to extra environment (the broker) or to an
 * error text (the step then fails without running).
 */
async function step(name, { script = name, command, counts: counted = false, env, skipNotice } = {}) {
  if (!command && !scripts[script]) {
    summary.push({ name, ms: -1, line: `${name.padEnd(18)} skipped: no such script yet` });
    return;
  }
  let extra = {};
  if (env) {
    const got = await env;
    if (typeof got === "string") {
      failed = true;
      summary.push({ name, ms: 0, line: `${name.padEnd(18)} FAILED before it ran: ${got}` });
      console.log(`\n=== ${name}: not run (${got}) ===`);
      return;
    }
    extra = got;
  }
  console.log(`=== ${name} started ${at()} ===`);
  const started = Date.now();
  const { code, signal, out } = await (command ? run(command[0], command.slice(1), extra) : run("npm", ["run", "--silent", script], extra));
  const ms = Date.now() - started;
  process.stdout.write(`\n=== ${name} (${secs(ms)}s, ended ${at()}) ===\n${out}${out.endsWith("\n") ? "" : "\n"}`);
  let line = `${name.padEnd(18)} ${code === 0 ? "ok" : `FAILED (exit ${code}${signal ? ` ${signal}` : ""})`} in ${secs(ms).padStart(6)}s`;
  if (code !== 0) failed = true;
  const c = counted ? counts(out) : undefined;
  if (code !== 0 || (c !== undefined && c.fail > 0)) {
    const named = failedTests(out);
    for (const t of named) failures.push(`${name}: ${t}`);
    if (named.length === 0) failures.push(`${name}: exit ${code}${signal ? ` ${signal}` : ""}, no failed test named in its output (printed above)`);
  }
  if (c !== undefined) {
    totalPass += c.pass;
    totalFail += c.fail;
    line += `: ${c.pass} passed, ${c.fail} failed`;
    const skipped = skipNotice && c.pass === 0 && c.fail === 0 && code === 0 ? skipNotice.exec(out) : null;
    if (skipped) {
      line += ` — SKIPPED: ${skipped[0]}`; // printed, never silent; a missing browser is not a failure
    } else if (!c.found || c.pass === 0) {
      failed = true;
      line += " — ran zero tests";
    }
  }
  summary.push({ name, ms, line });
}

// --- the shared broker and Confluent's client, both in the background from the start ---
const needBroker = ["test:kafka", "test:pack", "test:docs", "test:crash", "test:gap"].some((s) => wanted(s) && scripts[s]);
let broker;
const brokerEnv = !needBroker ? Promise.resolve({}) : (async () => {
  if (process.env.KAFKA_BROKERS) return { KAFKA_BROKERS: process.env.KAFKA_BROKERS };
  const t = Date.now();
  try {
    const { tsImport } = await import("tsx/esm/api");
    const { startBroker } = await tsImport("../test/broker/broker.ts", import.meta.url);
    broker = await startBroker();
  } catch (e) {
    return `the broker did not start: ${e instanceof Error ? e.message : e}`;
  }
  summary.push({ name: "broker start", ms: Date.now() - t, line: `${"broker start".padEnd(18)} ok in ${secs(Date.now() - t).padStart(6)}s: ${broker.brokers}` });
  console.log(`=== broker up at ${broker.brokers} ${at()} ===`);
  return { KAFKA_BROKERS: broker.brokers };
})();

const { confluentInstalled } = await import("./install-confluent.mjs");
const onlyBindings = process.env.OFFSET_FRONTIER_BINDINGS;
const needConfluent = wanted("test:kafka") && scripts["test:kafka"] && !confluentInstalled() &&
  (!onlyBindings || onlyBindings.split(",").map((b) => b.trim()).includes("confluent"));
const confluentBuilt = !needConfluent ? Promise.resolve(true) : (async () => {
  const t = Date.now();
  console.log(`=== building @confluentinc/kafka-javascript in the background ${at()} ===`);
  const { code, out } = await run(process.execPath, ["scripts/install-confluent.mjs"]);
  const ok = code === 0;
  process.stdout.write(`\n=== confluent build (${secs(Date.now() - t)}s) ===\n${ok ? out.split("\n").slice(-3).join("\n") : out}\n`);
  summary.push({ name: "confluent build", ms: Date.now() - t, line: `${"confluent build".padEnd(18)} ${ok ? "ok" : `FAILED (exit ${code})`} in ${secs(Date.now() - t).padStart(6)}s` });
  if (!ok) failed = true;
  return ok;
})();

// Debian's Chromium for test:browser: installed in the background from the start when missing
// (apt-get takes minutes on a fresh machine); the test skips, saying why, where it cannot be had.
const chromiumReady = !(wanted("test:browser") && scripts["test:browser"]) ? Promise.resolve({}) : (async () => {
  const t = Date.now();
  const { code, out } = await run(process.execPath, ["--import", "tsx", "test/browser/chromium.ts"]);
  const line = out.trim().split("\n").pop() ?? "";
  summary.push({ name: "chromium", ms: Date.now() - t, line: `${"chromium".padEnd(18)} ${code === 0 ? "ok" : `exit ${code}`} in ${secs(Date.now() - t).padStart(6)}s: ${line}` });
  return {};
})();

// The pinned Node 22 and 24 (scripts/install-node.mjs) that several steps run their
// @platformatic/kafka side on: installed once, in the background from the start, so that no
// two steps install the same one into .cache at the same time. A step that needs them waits.
const nodesReady = (async () => {
  const t = Date.now();
  const { code, out } = await run(process.execPath, ["scripts/install-node.mjs", "22", "24"]);
  summary.push({ name: "node 22/24", ms: Date.now() - t, line: `${"node 22/24".padEnd(18)} ${code === 0 ? "ok" : `FAILED (exit ${code})`} in ${secs(Date.now() - t).padStart(6)}s` });
  return code === 0 ? true : `the pinned Node 22/24 did not install:\n${out}`;
})();
/** `env`, once the pinned Node binaries are there (else why not). */
const withNodes = (env) => Promise.all([env, nodesReady]).then(([e, ok]) => (ok === true ? e : ok));

// --- the lanes ---
const lane = async (name, steps) => {
  const t = Date.now();
  for (const s of steps) if (wanted(s.script ?? s.name)) await step(s.name, s);
  return `${name} ${secs(Date.now() - t)}s`;
};
const kafka = (rt, files = []) => ({
  name: `test:kafka ${rt}`,
  script: "test:kafka",
  command: [process.execPath, "scripts/run-kafka-tests.mjs", rt, ...(files.length > 0 ? ["--", ...files] : [])],
  counts: true,
  env: rt !== "node" ? withNodes(brokerEnv) : confluentBuilt.then((ok) => (ok ? withNodes(brokerEnv) : "the Confluent client did not build")),
});
const lanes = await Promise.all([
  lane("checks+units", [
    { name: "typecheck" },
    { name: "lint" },
    { name: "check:wasm" },
    { name: "test:node", counts: true },
    { name: "test:bun", counts: true },
    { name: "test:deno", counts: true },
    // the docs/ pages' examples from the tarball (the Confluent one once its client is built), npm run broker
    { name: "test:docs", counts: true, env: confluentBuilt.then(() => withNodes(brokerEnv)) },
    // The @platformatic/kafka binding on the pinned Node 22 too (its whole run is Node 24's,
    // in broker lane B): ordering, shutdown, handover, read_committed, the join. Not the
    // rebalance file: on Node 22 its process once stayed alive 5 minutes after it passed.
    kafka("node22", ["consumer_ordering", "consumer_shutdown", "binding_handover", "platformatic_read_committed", "platformatic_join"]),
  ]),
  lane("kafka node", [kafka("node")]),
  lane("broker A", [
    kafka("bun"),
    kafka("deno"),
  ]),
  lane("broker B", [
    { name: "test:pack", counts: true, env: withNodes(brokerEnv) },
    { name: "test:crash", counts: true, env: withNodes(brokerEnv) },
    { name: "test:gap", counts: true, env: brokerEnv },
    { name: "test:chaos", counts: true, env: withNodes(Promise.resolve({})) },
    { name: "test:browser", counts: true, env: chromiumReady, skipNotice: /browser test SKIPPED[^\n]*/ },
    kafka("node24"), // the @platformatic/kafka binding's Node side (its client needs Node >= 22.22)
  ]),
]);
await confluentBuilt;
if (broker) await broker.stop().catch((e) => console.error(`test: stopping the broker failed: ${e instanceof Error ? e.message : e}`));

const total = Date.now() - T0;
const sum = summary.filter((s) => s.ms > 0).reduce((n, s) => n + s.ms, 0);
console.log(`\n=== summary (slowest first) ===\n${[...summary].sort((a, b) => b.ms - a.ms).map((s) => s.line).join("\n")}`);
console.log(`\nlanes: ${lanes.join(", ")}; steps add up to ${secs(sum)}s`);
if (failures.length > 0) console.log(`\n=== failed (${failures.length}) ===\n${failures.join("\n")}`);
console.log(`total ${secs(total)}s (${(total / 60000).toFixed(1)} min): ${totalPass} passed, ${totalFail} failed`);
// After stdout has taken everything written (see run-kafka-tests.mjs: a pipe not drained yet loses
// what an immediate exit leaves queued).
process.stdout.write("", () => process.exit(failed || totalFail > 0 ? 1 : 0));
