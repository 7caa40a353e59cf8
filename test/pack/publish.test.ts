/**
 * The JSR side of packaging: `deno publish --dry-run` over deno.json is clean (exit 0, no
 * warning, no slow types) and would publish only the library's sources, README, LICENSE
 * and deno.json. Offline: the dry run resolves through node_modules (deno.json
 * `nodeModulesDir: "manual"`). `--allow-dirty` because a working tree under test may hold
 * uncommitted edits; a clean clone has none.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = realpathSync(join(dirname(fileURLToPath(import.meta.url)), "..", ".."));

test("deno publish --dry-run is clean and publishes only core/, adapters/, README.md, LICENSE, deno.json", () => {
  const r = spawnSync(join(ROOT, "node_modules", ".bin", "deno"), ["publish", "--dry-run", "--allow-dirty"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  const out = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.status, 0, out);
  assert.match(out, /Success Dry run complete/, out);
  assert.doesNotMatch(out, /warn/i, "no warning");
  const files = [...out.matchAll(/file:\/\/(\S+)/g)].map((m) => m[1].slice(ROOT.length).replace(/^\//, ""));
  assert.ok(files.includes("core/mod.ts") && files.includes("adapters/deno.ts") && files.includes("README.md"), out);
  const stray = files.filter((f) => !/^(core|adapters)\/.*\.ts$|^(README\.md|LICENSE|deno\.json)$/.test(f));
  assert.deepEqual(stray, [], "nothing else is published");
  assert.ok(!files.some((f) => f.endsWith(".test.ts")), "no test file is published");
});
