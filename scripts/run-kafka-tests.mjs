#!/usr/bin/env node
// The real-broker suite (test/kafka/*.test.ts) on Node, Bun and Deno in turn, against
// one broker: run it as `node scripts/with-broker.mjs -- node scripts/run-kafka-tests.mjs`
// (`npm run test:kafka`), which sets KAFKA_BROKERS and stops the broker afterwards.
// Without KAFKA_BROKERS every test file would start its own broker, so this refuses.
//
//   node scripts/run-kafka-tests.mjs [node|node22|node24|bun|deno ...] [-- file filters]
//
// The @platformatic/kafka binding's client needs Node >= 22.22 or >= 24.6: when the Node
// running this is older, its Node side runs as `node24` (the pinned Node 24 of
// scripts/install-node.mjs, installed on first use): the suites that loop over the
// bindings, with OFFSET_FRONTIER_BINDINGS=platformatic. `node22` does the same on Node 22.
//
// Fails when any runtime fails or reports zero passing tests.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseCli, usageError } from "./cli.mjs";
import { plain as withoutColours } from "./test-output.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const { positionals: wanted } = parseCli({
  name: "run-kafka-tests",
  usage: `usage: node scripts/with-broker.mjs -- node scripts/run-kafka-tests.mjs [node|node22|node24|bun|deno ...] [-- file filters]

The real-broker suite (test/kafka/*.test.ts) on each runtime in turn, against the broker
of KAFKA_BROKERS. node22/node24: the suites that loop over the bindings, through the
@platformatic/kafka binding only, on the pinned Node 22/24 (run by default when this Node
is too old for that client). Fails when a runtime fails or passes no test.`,
  positionals: true,
  argv: sep >= 0 ? argv.slice(0, sep) : argv,
});
const filters = sep >= 0 ? argv.slice(sep + 1) : [];
const bad = wanted.find((r) => !["node", "node22", "node24", "bun", "deno"].includes(r));
if (bad !== undefined) usageError("run-kafka-tests", `runtimes are node, node22, node24, bun and deno; got ${JSON.stringify(bad)}`);
const only = process.env.OFFSET_FRONTIER_BINDINGS;
const onlyList = only?.split(",").map((b) => b.trim()).filter(Boolean);
const platformaticWanted = !onlyList || onlyList.includes("platformatic");
const [major, minor] = process.versions.node.split(".").map(Number);
const nodeRunsPlatformatic = major > 24 || (major === 24 && minor >= 6) || (major === 22 && minor >= 22) || major === 23;
const runtimes = wanted.length > 0
  ? wanted
  : ["node", ...(platformaticWanted && !nodeRunsPlatformatic ? ["node24"] : []), "bun", "deno"];

if (!process.env.KAFKA_BROKERS) {
  console.error("run-kafka-tests: KAFKA_BROKERS is not set; run it through scripts/with-broker.mjs");
  process.exit(2);
}

// The slowest file first, so that the others run beside it (Node runs NODE_KAFKA_CONCURRENCY
// files at a time): consumer_outage.test.ts restarts brokers of its own after 20-30 s outages,
// ~200 s of the Node run, most of it waiting.
const SLOW_FIRST = ["consumer_outage.test.ts"];
const files = readdirSync(join(ROOT, "test", "kafka"))
  .filter((f) => f.endsWith(".test.ts"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort((a, b) => (SLOW_FIRST.includes(b) ? 1 : 0) - (SLOW_FIRST.includes(a) ? 1 : 0) || a.localeCompare(b))
  .map((f) => join("test", "kafka", f));
if (files.length === 0) {
  console.error("run-kafka-tests: no test files");
  process.exit(2);
}

// The Confluent binding's client (Node only) is not a devDependency: install it for the suites.
if (runtimes.includes("node") && (!onlyList || onlyList.includes("confluent"))) {
  const { ensureConfluent } = await import("./install-confluent.mjs");
  const secs = ensureConfluent();
  if (secs > 0) console.log(`run-kafka-tests: installed @confluentinc/kafka-javascript in ${secs.toFixed(1)}s`);
}

// The pinned newer Node, for the @platformatic/kafka binding's Node side.
const newerNode = {};
for (const line of [22, 24]) {
  if (!runtimes.includes(`node${line}`)) continue;
  const { ensureNode } = await import("./install-node.mjs");
  newerNode[line] = ensureNode(line);
}
// There, only the suites that loop over the bindings (the others are KafkaJS's, run on node already).
const bindingFiles = files.filter((f) => readFileSync(join(ROOT, f), "utf8").includes("./bindings.ts"));

const bin = (name) => join(ROOT, "node_modules", ".bin", name);
const COMMANDS = {
  // Three files at a time (NODE_KAFKA_CONCURRENCY): topics and groups are unique per test, so
  // files share the broker; the outage file's own brokers are its own. Most of a file's time is
  // spent waiting (rebalances, session timeouts, outages), not on the 2 cores.
  node: [process.execPath, ["--import", "tsx", "--test", `--test-concurrency=${process.env.NODE_KAFKA_CONCURRENCY ?? 3}`, ...files]],
  node22: [newerNode[22], ["--import", "tsx", "--test", "--test-reporter=tap", "--test-concurrency=1", ...bindingFiles], { OFFSET_FRONTIER_BINDINGS: "platformatic" }],
  node24: [newerNode[24], ["--import", "tsx", "--test", "--test-reporter=tap", "--test-concurrency=1", ...bindingFiles], { OFFSET_FRONTIER_BINDINGS: "platformatic" }],
  bun: [bin("bun"), ["test", "--timeout", "300000", ...files.map((f) => `./${f}`)]],
  deno: [bin("deno"), ["test", "--allow-all", ...files]],
};

/** Passing and failing counts from node:test (TAP), bun test and deno test output. */
function counts(text) {
  const plain = withoutColours(text);
  let pass = 0, fail = 0;
  for (const m of plain.matchAll(/^# pass (\d+)\s*$/gm)) pass += +m[1];
  for (const m of plain.matchAll(/^# fail (\d+)\s*$/gm)) fail += +m[1];
  for (const m of plain.matchAll(/^\s*(\d+) pass\s*$/gm)) pass += +m[1];
  for (const m of plain.matchAll(/^\s*(\d+) fail\s*$/gm)) fail += +m[1];
  let raw = "";
  for (const m of plain.matchAll(/^(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed.*$/gm)) {
    // deno counts a describe block as a test and its tests as steps: count leaf tests
    pass += +m[1] + (m[2] ? +m[2] : 0) - leafParents(plain);
    fail += +m[3];
    raw = ` (deno: ${m[0].replace(/\s*\(\d+m?s\)\s*$/, "")})`;
  }
  return { pass, fail, raw };
}

/** deno: top-level tests that ran steps (describe blocks): "name ..." lines followed by indented steps. */
function leafParents(plain) {
  const lines = plain.split("\n");
  let n = 0;
  for (let i = 0; i + 1 < lines.length; i++) {
    if (/^\S.* \.\.\.\s*$/.test(lines[i]) && /^\s+\S.* \.\.\./.test(lines[i + 1])) n++;
  }
  return n;
}

function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (d) => ((out += d), process.stdout.write(d)));
    child.stderr.on("data", (d) => ((out += d), process.stderr.write(d)));
    child.on("error", (e) => resolve({ code: 127, out: `${out}\n${e.message}` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }));
  });
}

const summary = [];
let failed = false;
for (const rt of runtimes) {
  const command = COMMANDS[rt];
  if (!command) {
    console.error(`run-kafka-tests: unknown runtime ${rt}`);
    process.exit(2);
  }
  if (!command[1].some((a) => a.endsWith(".ts"))) {
    summary.push(`${rt.padEnd(6)} skipped: no suite of the filter loops over the bindings`);
    continue;
  }
  console.log(`\n=== kafka tests on ${rt} (${command[1].filter((a) => a.endsWith(".ts")).length} files) ===`);
  const t0 = Date.now();
  const { code, out } = await run(...command);
  const { pass, fail, raw } = counts(out);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const ok = code === 0 && fail === 0 && pass > 0;
  if (!ok) failed = true;
  summary.push(
    `${rt.padEnd(6)} ${ok ? "ok" : "FAILED"} in ${secs}s: ${pass} passed, ${fail} failed${raw}` +
      (code !== 0 ? ` (exit ${code})` : "") + (pass === 0 ? " — ran zero tests" : ""),
  );
}
console.log(`\n=== kafka summary ===\n${summary.join("\n")}`);
// Not process.exit() at once: with a test file's output still queued for a busy pipe (a run that
// logged a client's errors by the thousand), exiting dropped its end — the TAP totals and this
// summary — and the test command, reading no totals, failed the step as having run no test.
process.stdout.write("", () => process.exit(failed ? 1 : 0));
