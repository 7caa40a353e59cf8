// Every command line of bench/, demo/ and scripts/ is safe to poke at: `--help` prints
// usage and exits 0 within seconds, a bad flag or value prints one line (no stack) and
// exits 2, and neither changes a tracked file. The CLIs always run on Node (via tsx for
// .ts files), whichever runtime runs this test.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NODE = process.versions.bun || (globalThis as { Deno?: unknown }).Deno ? "node" : process.execPath;

/** Every CLI, and per CLI the bad inputs beyond an unknown flag. */
const CLIS: Array<{ file: string; bad?: string[][] }> = [
  { file: "bench/run.mjs", bad: [["--processes", "abc"], ["--rows", "js,nope"], ["--quick", "--out", "../x"]] },
  { file: "bench/suite.ts", bad: [["--row", "nope"]] },
  { file: "bench/micro.ts" },
  { file: "bench/floor.ts", bad: [["--rounds", "abc"]] },
  { file: "bench/engines.bench.ts" },
  { file: "bench/consumer.bench.ts", bad: [["--records"], ["--runtime", "java"], ["--processes", "0"]] },
  { file: "bench/consumer_run.ts", bad: [[], ["--variants", "plain,nope"]] },
  { file: "bench/codec.bench.ts" },
  { file: "bench/unfinished_runs.bench.ts", bad: [["--filter", "("]] },
  { file: "demo/run.ts", bad: [["--runs", "abc"], ["--scenario", "nope"], ["--scenario", "rebalance", "--runtime", "java"], ["--scenario=rebalance", "--records", "5"]] },
  { file: "demo/consumer.ts" },
  { file: "demo/report.ts", bad: [[]] },
  { file: "scripts/build-wasm.mjs" },
  { file: "scripts/run-kafka-tests.mjs", bad: [["java"]] },
  { file: "scripts/with-broker.mjs", bad: [[]] },
  { file: "scripts/test.mjs", bad: [["nope"]] },
  { file: "scripts/check-deno.mjs" },
];

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(file: string, args: string[]): Promise<Outcome> {
  const pre = file.endsWith(".ts") ? ["--import", "tsx"] : [];
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [...pre, file, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KAFKA_BROKERS: "", NO_COLOR: "1" },
    });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const limit = setTimeout(() => child.kill("SIGKILL"), 30_000); // only the child this test started
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(limit);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** Runs `jobs` with at most `width` at a time (2 cores, shared). */
async function pooled<T>(jobs: Array<() => Promise<T>>, width = 3): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  }));
  return out;
}

const status = (): string => execFileSync("git", ["status", "--porcelain"], { cwd: ROOT, encoding: "utf8" });

describe("command lines", () => {
  test("--help exits 0 with usage; bad flags and values exit 2 with one line; no tracked file changes", {
    timeout: 240_000,
  }, async () => {
    const before = status();
    const cases: Array<{ file: string; args: string[]; help: boolean }> = [];
    for (const { file, bad = [] } of CLIS) {
      cases.push({ file, args: ["--help"], help: true });
      cases.push({ file, args: ["--no-such-flag"], help: false });
      for (const args of bad) cases.push({ file, args, help: false });
    }
    const outcomes = await pooled(cases.map((c) => () => run(c.file, c.args)));
    cases.forEach((c, i) => {
      const o = outcomes[i];
      const what = `${c.file} ${c.args.join(" ")}`;
      if (c.help) {
        assert.equal(o.code, 0, `${what}: exit code (stderr: ${o.stderr.trim()})`);
        assert.match(o.stdout, /^usage: /, `${what}: prints usage`);
        assert.ok(o.ms < 20_000, `${what}: took ${o.ms} ms`);
      } else {
        assert.equal(o.code, 2, `${what}: exit code (stdout: ${o.stdout.trim()}; stderr: ${o.stderr.trim()})`);
        const lines = o.stderr.trim().split("\n");
        assert.equal(lines.length, 1, `${what}: one line, got:\n${o.stderr}`);
        assert.match(lines[0], /\(try --help\)$/, `${what}: says how to get help`);
        assert.doesNotMatch(o.stderr, /^\s+at /m, `${what}: no stack`);
      }
    });
    assert.equal(status(), before, "git status --porcelain did not change");
  });
});
