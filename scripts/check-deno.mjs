#!/usr/bin/env node
// The JSR side of `npm run lint`: every entry point of deno.json "exports" must pass
// `deno check` (type-check as Deno and JSR see it, bare imports through deno.json
// "imports") and `deno doc --lint` (every public symbol documented, explicit types, no
// private type in a public signature). Prints Deno's report and exits 1 when either
// complains; `--help` prints this.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseCli } from "./cli.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
parseCli({
  name: "check-deno",
  usage: "usage: node scripts/check-deno.mjs      (part of npm run lint)\n\n" +
    "deno check and deno doc --lint of every entry point in deno.json \"exports\".",
});
const deno = process.platform === "win32" ? "deno.cmd" : "deno";
const bin = fileURLToPath(new URL(`../node_modules/.bin/${deno}`, import.meta.url));
const entries = Object.values(JSON.parse(readFileSync(new URL("../deno.json", import.meta.url), "utf8")).exports);

let failed = false;
for (const cmd of [["check", ...entries], ["doc", "--lint", ...entries]]) {
  const r = spawnSync(bin, cmd, { cwd: root, encoding: "utf8", timeout: 300_000, env: { ...process.env, NO_COLOR: "1" } });
  // No filter: KafkaJS's types appear in the public API under documented aliases (adapters/kafkajs/types.ts).
  if (r.status === 0) continue;
  failed = true;
  process.stderr.write(`deno ${cmd[0]} failed:\n${r.stdout}${r.stderr}\n`);
}
process.exit(failed ? 1 : 0);
