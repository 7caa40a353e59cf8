#!/usr/bin/env node
// The test command (`npm test`): type-check, lint, the WASM bytes check, the unit suite on
// Node, Bun and Deno, then the integration suites against a real broker. Every step must
// pass, and every test step must report a passing count above zero (Node 20's
// `node --test` exits 0 when it finds no test). Steps whose npm script does not exist
// yet are skipped with a notice.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseCli, usageError } from "./cli.mjs";

const scripts = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts;
const ALL = ["typecheck", "lint", "check:wasm", "test:node", "test:bun", "test:deno", "test:kafka", "test:pack", "test:crash", "test:gap", "test:chaos"];
const { positionals: only } = parseCli({
  name: "test",
  usage: `usage: npm test [-- STEP ...]      (node scripts/test.mjs [STEP ...])

Every step in turn (or only those named): ${ALL.join(", ")}.
Each must pass; each test step must report a passing count above zero.`,
  positionals: true,
});
const unknownStep = only.find((s) => !ALL.includes(s));
if (unknownStep !== undefined) usageError("test", `unknown step ${JSON.stringify(unknownStep)}; steps are ${ALL.join(", ")}`);
const STEPS = [
  { script: "typecheck" },
  { script: "lint" },
  { script: "check:wasm" },
  { script: "test:node", counts: true },
  { script: "test:bun", counts: true },
  { script: "test:deno", counts: true },
  { script: "test:kafka", counts: true },
  { script: "test:pack", counts: true },
  { script: "test:crash", counts: true },
  { script: "test:gap", counts: true },
  { script: "test:chaos", counts: true },
].filter((s) => only.length === 0 || only.includes(s.script));

/** Passing and failing counts from node:test (TAP), bun test and deno test output. */
export function counts(text) {
  // deno/bun/node print ANSI colours
  const plain = text.replace(new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g"), "");
  let pass = 0, fail = 0, found = false;
  for (const m of plain.matchAll(/^# pass (\d+)\s*$/gm)) (pass += +m[1]), (found = true);
  for (const m of plain.matchAll(/^# fail (\d+)\s*$/gm)) fail += +m[1];
  for (const m of plain.matchAll(/^\s*(\d+) pass\s*$/gm)) (pass += +m[1]), (found = true);
  for (const m of plain.matchAll(/^\s*(\d+) fail\s*$/gm)) fail += +m[1];
  for (const m of plain.matchAll(/^(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/gm)) {
    pass += Math.max(+m[1], +(m[2] ?? 0)); // deno counts describe blocks as tests, their tests as steps
    fail += +m[3];
    found = true;
  }
  return { pass, fail, found };
}

function run(script) {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d, process.stdout.write(d)));
    child.stderr.on("data", (d) => (out += d, process.stderr.write(d)));
    child.on("close", (code, signal) => resolve({ code: code ?? 1, signal, out }));
  });
}

const summary = [];
let failed = false, totalPass = 0, totalFail = 0;
for (const step of STEPS) {
  if (!scripts[step.script]) {
    summary.push(`${step.script.padEnd(12)} skipped: no such script yet`);
    continue;
  }
  console.log(`\n=== ${step.script} ===`);
  const started = Date.now();
  const { code, signal, out } = await run(step.script);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  let line = `${step.script.padEnd(12)} ${code === 0 ? "ok" : `FAILED (exit ${code}${signal ? ` ${signal}` : ""})`} in ${secs}s`;
  if (code !== 0) failed = true;
  if (step.counts) {
    const c = counts(out);
    totalPass += c.pass;
    totalFail += c.fail;
    line += `: ${c.pass} passed, ${c.fail} failed`;
    if (!c.found || c.pass === 0) {
      failed = true;
      line += " — ran zero tests";
    }
  }
  summary.push(line);
}
console.log(`\n=== summary ===\n${summary.join("\n")}`);
console.log(`\n${totalPass} passed, ${totalFail} failed`);
process.exit(failed || totalFail > 0 ? 1 : 0);
