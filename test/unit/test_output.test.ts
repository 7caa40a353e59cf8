// The test command's summary names the failed tests (scripts/test-output.mjs), so that the
// tail of a CI log says which test failed and why. Read here from what node:test, bun test
// and deno test really print for a file with two failures.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { counts, failedTests } from "../../scripts/test-output.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURE = "test/unit/failing_tests.fixture.ts";
const NODE = process.versions.bun || (globalThis as { Deno?: unknown }).Deno ? "node" : process.execPath;
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

/** Each runner, as the test command runs it. */
const RUNNERS: Record<string, [string, string[]]> = {
  "node:test (TAP)": [NODE, ["--import", "tsx", "--test", "--test-reporter=tap", FIXTURE]],
  "bun test": [bin("bun"), ["test", `./${FIXTURE}`]],
  "deno test": [bin("deno"), ["test", "--no-check", FIXTURE]],
};

/** This process's environment without node:test's marker (a child would think it is a subtest). */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_TEST_CONTEXT") env[k] = v;
  return env;
}

describe("the failed tests named from each runner's output", () => {
  for (const [runner, [cmd, args]] of Object.entries(RUNNERS)) {
    test(runner, () => {
      const run = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", env: childEnv() });
      const out = `${run.stdout}${run.stderr}`;
      assert.notEqual(run.status, 0, out);
      const c = counts(out);
      assert.equal(c.fail, 2, out);
      assert.ok(c.found && c.pass >= 1, out);
      const named = failedTests(out);
      assert.equal(named.length, 2, `${named.join("\n")}\n---\n${out}`);
      assert.match(named[0], /fails an assertion.* — .*one is not two/);
      assert.match(named[1], /^throws.* — .*thrown at top level/);
      assert.ok(!named.some((n) => /\bpasses\b/.test(n)), named.join("\n"));
    });
  }
});

test("output without a failure names none, and a suite's own 'subtest failed' is left out", () => {
  assert.deepEqual(failedTests("(pass) a [1ms]\n\n 1 pass\n 0 fail\n"), []);
  const tap = [
    "# Subtest: suite",
    "    not ok 1 - leaf",
    "      ---",
    "      location: '/x/t.test.ts:3:5'",
    "      error: 'nope'",
    "      ...",
    "not ok 1 - suite",
    "  ---",
    "  error: '1 subtest failed'",
    "  ...",
  ].join("\n");
  assert.deepEqual(failedTests(tap), ["leaf (t.test.ts) — nope"]);
});
