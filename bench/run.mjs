#!/usr/bin/env node
// The cross-runtime benchmark (`npm run bench`, `npm run bench -- --quick`).
//
// Runs bench/suite.ts once per (runtime, row) — Node (via tsx), Bun, then Deno — each in
// its own process, streams a line per result as it finishes, and writes <name>.json
// (rows), <name>.md (tables + ratio checks), <name>.svg (chart) and <name>.summary.svg
// (the compact chart; `summary.svg` for latest), where <name> is `latest` for the full
// run and `quick` for --quick. They go to the git-ignored bench/results/tmp/ unless
// --save is given: then to bench/results/ (the committed results) and the results
// section of bench/README.md.
//
// Then, as a separate step, the completed-set codec bench (bench/codec.bench.ts) once per
// runtime: its table goes into <name>.md and its rows into codec.json (full run) or
// <name>.codec.json. --no-codec skips it (so does --only without `codec`); --codec-only runs
// just that step and writes codec.json and codec.md (codec-quick.* with --quick), nothing else.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { checks, codecMarkdown, fmtRate, markdown, readmeSection, summarySvg, svg } from "./report.mjs";
import { intFlag, listFlag, parseCli, usageError } from "../scripts/cli.mjs";

const ALL_ROWS = ["js", "wasm", "wasm-batch", "set-watermark", "deque-map", "sorted-map"];
const ALL_RUNTIMES = ["node", "bun", "deno"];
const ALL_SCENARIOS = ["in-order", "random", "slow-head", "gaps-txn", "gaps-compacted", "partitions", "batches", "steady-64", "memory-dense", "memory-txn", "memory-compacted"];
const USAGE = `usage: npm run bench -- [options]      (node bench/run.mjs [options])

The cross-runtime benchmark: every row × scenario on Node, Bun and Deno (a full run takes
an hour or more on 2 cores; --quick, with reduced sizes, about 2½ minutes: 139 s for the
three runtimes and 45 s for --runtimes node on this project's 2 busy cores).

  --quick              reduced sizes, one process per row; ratio checks are informational
  --save               write the committed results (bench/results/<name>.*, and for a full
                       run the results section of bench/README.md); without it everything
                       goes to the git-ignored bench/results/tmp/
  --runtimes LIST      comma-separated: ${ALL_RUNTIMES.join(", ")} (default all)
  --rows LIST          comma-separated: ${ALL_ROWS.join(", ")} (default all)
  --only LIST          comma-separated scenarios: ${ALL_SCENARIOS.join(", ")}
  --processes K        processes per row for the random scenario (default 5, quick 1)
  --no-codec           skip the completed-set codec step (also skipped by --only without codec)
  --codec-only         only the codec step: writes codec.json and codec.md
  --out NAME           result name (default latest, quick for --quick)
  --render-only        no benchmark: re-render <name>.md and the charts from <name>.json
                       (read from bench/results/tmp/, else from the committed bench/results/)
                       (--report is the same)
  -h, --help           this text`;

const { values: o } = parseCli({
  name: "bench",
  usage: USAGE,
  options: {
    quick: { type: "boolean" },
    save: { type: "boolean" },
    runtimes: { type: "string" },
    rows: { type: "string" },
    only: { type: "string" },
    processes: { type: "string" },
    out: { type: "string" },
    report: { type: "boolean" },
    "render-only": { type: "boolean" },
    "no-codec": { type: "boolean" },
    "codec-only": { type: "boolean" },
  },
});
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const quick = o.quick === true;
const renderOnly = o.report === true || o["render-only"] === true;
const name = o.out ?? (quick ? "quick" : "latest");
if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) usageError("bench", `--out must be a plain file name; got ${JSON.stringify(name)}`);
const committedDir = join(root, "bench", "results");
const outDir = o.save ? committedDir : join(committedDir, "tmp");
const rows = o.rows === undefined ? ALL_ROWS : listFlag("bench", "rows", o.rows, ALL_ROWS);
const runtimes = o.runtimes === undefined ? ALL_RUNTIMES : listFlag("bench", "runtimes", o.runtimes, ALL_RUNTIMES);
const only = o.only === undefined ? undefined : listFlag("bench", "only", o.only, [...ALL_SCENARIOS, "codec"]).join(",");
const codecOnly = o["codec-only"] === true;
const withCodec = codecOnly || (o["no-codec"] !== true && (!only || only.split(",").includes("codec")));
// The ratio checks' scenario runs in this many processes per (runtime, row) in a full
// run; the median process counts. On a shared 2-vCPU machine a whole process can land in
// a slow phase (a neighbour's load) or get slower compiled code (JIT timing) that the
// median of passes inside one process cannot remove; every row, baselines included, gets
// the same treatment, and the rows take turns (see below).
const REPEATED = "random";
const processes = o.processes === undefined ? (quick ? 1 : 5) : intFlag("bench", "processes", o.processes, 1, 50);

const bin = (tool) => {
  const local = join(root, "node_modules", ".bin", tool);
  return existsSync(local) ? [local] : ["npx", tool];
};

/** The command line of one (runtime, row) process (`scenarios` overrides --only). */
function command(runtime, row, scenarios = only) {
  const args = ["bench/suite.ts", "--row", row, ...(quick ? ["--quick"] : []), ...(scenarios ? ["--only", scenarios] : [])];
  switch (runtime) {
    case "node":
      return [process.execPath, "--expose-gc", "--max-old-space-size=8192", "--import", "tsx", ...args];
    case "bun":
      return [...bin("bun"), ...args];
    case "deno":
      return [...bin("deno"), "run", "-A", "--v8-flags=--expose-gc,--max-old-space-size=8192", ...args];
    default:
      throw new Error(`unknown runtime ${runtime}`);
  }
}

/** Runs one process (a row of the suite, or the mitata micro-benchmark); resolves with its rows and runtime version. */
function runOne(runtime, row, scenarios = only) {
  const [cmd, ...args] = command(runtime, row, scenarios);
  if (row === "micro") args.splice(args.indexOf("bench/suite.ts"), 3, "bench/micro.ts");
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const results = [];
    let meta, buffer = "", errors = "";
    const limit = setTimeout(() => {
      errors += `timed out after ${quick ? 120 : 1200} s`;
      child.kill("SIGKILL"); // only the child this run started
    }, (quick ? 120 : 1200) * 1000);
    child.stdout.on("data", (d) => {
      buffer += d;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith("@@row ")) {
          const r = JSON.parse(line.slice(6));
          if (rows.includes(r.engine)) results.push(r);
        }
        else if (line.startsWith("@@meta ")) meta = JSON.parse(line.slice(7));
        else if (line.startsWith("@@about ")) {
          const a = JSON.parse(line.slice(8));
          about[a.scenario] = a.about;
        }
        else if (line.trim()) console.log(`  ${line}`);
      }
    });
    child.stderr.on("data", (d) => (errors += d));
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      if (code !== 0) {
        const why = `${runtime}/${row} exited ${code ?? signal}: ${errors.trim().split("\n").slice(-3).join(" | ")}`;
        console.log(`  ERROR ${why}`);
        results.push({ runtime, engine: row, scenario: "(process)", n: 0, ops_per_sec: null, bytes_per_pending: null, note: `ERROR: ${why}` });
      }
      resolve({ results, meta });
    });
  });
}

/** Runs bench/codec.bench.ts on one runtime; resolves with its report (or an error note). */
function runCodec(runtime) {
  const [cmd, ...args] = command(runtime, "codec");
  args.splice(args.indexOf("bench/suite.ts"), 3, "bench/codec.bench.ts", "--emit");
  const i = args.indexOf("--only");
  if (i >= 0) args.splice(i, 2);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", errors = "";
    const limit = setTimeout(() => child.kill("SIGKILL"), 600 * 1000); // only the child this run started
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (errors += d));
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      const line = out.split("\n").find((l) => l.startsWith("@@codec "));
      if (code === 0 && line) resolve(JSON.parse(line.slice(8)));
      else {
        console.log(`  ERROR codec on ${runtime} exited ${code ?? signal}: ${errors.trim().split("\n").slice(-3).join(" | ")}`);
        resolve(undefined);
      }
    });
  });
}

/** The codec step on every runtime: prints each runtime's line, returns the reports. */
async function codecStep() {
  const reports = [];
  for (const runtime of runtimes) {
    const t0 = Date.now();
    console.log(`\n== codec: ${runtime} ==`);
    const r = await runCodec(runtime);
    if (!r) continue;
    reports.push(r);
    for (const row of r.rows) {
      console.log(`  ${row.pattern}: ours ${row.ours.chars} chars (${row.ours.format}), PC ${row.pc.chars}${row.pc.sent ? "" : " (dropped)"}; encode ${row.ours.encodeUs.toFixed(2)} µs`);
    }
    console.log(`== codec: ${runtime}: ${Math.round((Date.now() - t0) / 1000)} s ==`);
  }
  return reports;
}

/**
 * Runs REPEATED in the further processes of each row in `repeated` ({ row, first, rates }),
 * then sets each row's result to the median process. The processes take turns across the
 * rows, round by round, so that a slow or fast phase of the machine falls on the tracker
 * rows and the baselines alike.
 */
async function repeatTakingTurns(runtime, repeated) {
  for (let k = 1; k < processes; k++) {
    for (const { row, first, rates } of repeated) {
      const again = (await runOne(runtime, row, REPEATED)).results.find((r) => r.scenario === REPEATED && r.n === first.n);
      if (again?.ops_per_sec) rates.push(again.ops_per_sec);
    }
    console.log(`  ${runtime} ${REPEATED}: round ${k + 1}/${processes} of ${repeated.map((r) => r.row).join(", ")} done`);
  }
  for (const { row, first, rates } of repeated) {
    const sorted = [...rates].sort((a, b) => a - b);
    first.ops_per_sec = sorted[(sorted.length - 1) >> 1]; // the median (the lower one of an even count)
    first.note = `median of ${rates.length} processes (${rates.map(fmtRate).join(", ")}); first process: ${first.note}`;
    console.log(`  ${runtime} ${row} ${REPEATED}: median of ${rates.length} processes ${fmtRate(first.ops_per_sec)}`);
  }
}

/** The files this suite runs (for the "uncommitted changes" note of a result). */
const SUITE_FILES = ["subject.ts", "rows.ts", "data.ts", "measure.ts", "scenario_kit.ts", "scenarios.ts", "scenarios_order.ts",
  "scenarios_gaps.ts", "scenarios_consumer.ts", "scenarios_memory.ts", "suite.ts", "micro.ts", "codec.bench.ts", "run.mjs", "report.mjs", "report_data.mjs", "report_svg.mjs", "baselines"]
  .map((f) => `bench/${f}`);

function machine() {
  const cpus = os.cpus();
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "core", "assembly", ...SUITE_FILES], {
      cwd: root,
      encoding: "utf8",
    }).split("\n").filter((l) => l.trim()).map((l) => l.slice(3));
    if (dirty.length) commit += ` + uncommitted: ${dirty.join(", ")}`;
  } catch { /* not a git checkout */ }
  return {
    cpu: `${cpus.length} × ${cpus[0]?.model?.trim() ?? "unknown CPU"}`,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    commit,
    date: new Date().toISOString(),
  };
}

/** Refreshes the codec table of bench/README.md (between its markers). */
function writeCodecReadme(reports) {
  const readme = join(root, "bench", "README.md");
  if (!existsSync(readme)) return;
  const text = readFileSync(readme, "utf8");
  const start = "<!-- codec:start -->", end = "<!-- codec:end -->";
  const a = text.indexOf(start), b = text.indexOf(end);
  if (a >= 0 && b > a) writeFileSync(readme, `${text.slice(0, a + start.length)}\n${codecMarkdown(reports, { heading: false })}${text.slice(b)}`);
}

if (codecOnly) {
  mkdirSync(outDir, { recursive: true });
  const reports = await codecStep();
  const base = quick ? "codec-quick" : "codec";
  writeFileSync(join(outDir, `${base}.json`), JSON.stringify({ machine: machine(), runs: reports }, null, 1) + "\n");
  writeFileSync(join(outDir, `${base}.md`), `# offset-frontier codec benchmark${quick ? " (quick)" : ""}\n\n${codecMarkdown(reports)}`);
  if (!quick && o.save) writeCodecReadme(reports); // the committed README only with --save
  console.log(`
wrote ${relative(root, join(outDir, base))}.json and .md${!quick && o.save ? ", the codec table of bench/README.md" : ""}`);
  process.exit(0);
}

const about = {};
const jsonPath = join(outDir, `${name}.json`);
let report;
if (renderOnly) {
  // The rows: this run's output directory first, else the committed results.
  const from = [jsonPath, join(committedDir, `${name}.json`)].find((p) => existsSync(p));
  if (from === undefined) usageError("bench", `--render-only: no ${relative(root, jsonPath)} to render`);
  report = JSON.parse(readFileSync(from.replace(/\.json$/, ".meta.json"), "utf8"));
  report.rows = JSON.parse(readFileSync(from, "utf8"));
  mkdirSync(outDir, { recursive: true });
  console.log(`rendering ${relative(root, from)}`);
} else {
  mkdirSync(outDir, { recursive: true });
  const started = Date.now();
  const info = { quick, machine: machine(), versions: {}, load: {}, seconds: {} };
  const all = [];
  console.log(`offset-frontier bench${quick ? " (quick: reduced sizes)" : ""} — ${runtimes.join(", ")} × ${rows.join(", ")}`);
  console.log(`machine: ${info.machine.cpu}, ${info.machine.memory_gib} GiB; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  for (const runtime of runtimes) {
    const t0 = Date.now();
    const loadBefore = os.loadavg()[0];
    console.log(`\n== ${runtime} ==`);
    const repeated = []; // rows whose REPEATED result gets more processes: { row, first, rates }
    for (const row of [...rows, ...(only && !only.split(",").includes("steady-64") ? [] : ["micro"])]) {
      const { results, meta } = await runOne(runtime, row);
      if (meta?.version) info.versions[runtime] = meta.version;
      const first = results.find((r) => r.scenario === REPEATED && r.ops_per_sec !== null);
      if (first && row !== "micro" && processes > 1) repeated.push({ row, first, rates: [first.ops_per_sec] });
      all.push(...results);
    }
    await repeatTakingTurns(runtime, repeated);
    info.seconds[runtime] = Math.round((Date.now() - t0) / 1000);
    info.load[runtime] = [loadBefore, os.loadavg()[0]].map((l) => +l.toFixed(2));
    console.log(`== ${runtime}: ${info.seconds[runtime]} s (1-min load average ${info.load[runtime].join(" → ")}) ==`);
  }
  if (withCodec) {
    const t0 = Date.now();
    info.codec = await codecStep();
    info.seconds.codec = Math.round((Date.now() - t0) / 1000);
    const file = name === "latest" ? "codec.json" : `${name}.codec.json`;
    writeFileSync(join(outDir, file), JSON.stringify({ machine: info.machine, runs: info.codec }, null, 1) + "\n");
    if (name === "latest" && !quick) writeCodecReadme(info.codec);
  }
  info.seconds.total = Math.round((Date.now() - started) / 1000);
  report = { ...info, about, rows: all };
  const { rows: _rows, ...meta } = report;
  writeFileSync(jsonPath, JSON.stringify(all, null, 1) + "\n");
  writeFileSync(jsonPath.replace(/\.json$/, ".meta.json"), JSON.stringify(meta, null, 1) + "\n");
}

const summaryName = name === "latest" ? "summary.svg" : `${name}.summary.svg`;
writeFileSync(join(outDir, `${name}.md`), markdown(report));
writeFileSync(join(outDir, `${name}.svg`), svg(report));
writeFileSync(join(outDir, summaryName), summarySvg(report));
// A saved full run also refreshes the results section of bench/README.md (between its markers).
const readme = join(root, "bench", "README.md");
if (o.save && !report.quick && name === "latest" && existsSync(readme)) {
  const text = readFileSync(readme, "utf8");
  const start = "<!-- results:start (written by bench/run.mjs) -->", end = "<!-- results:end -->";
  const a = text.indexOf(start), b = text.indexOf(end);
  if (a >= 0 && b > a) writeFileSync(readme, `${text.slice(0, a + start.length)}\n${readmeSection(report)}${text.slice(b)}`);
}
const lines = checks(report);
console.log(`\n== ratio checks${report.quick ? " (quick run: reduced sizes, the targets are set for the full sizes: informational)" : ""} ==`);
for (const l of lines) console.log(`${l.status.padEnd(4)} ${l.runtime.padEnd(5)} ${l.text}`);
const where = relative(root, outDir);
console.log(`\nwrote ${where}/${renderOnly ? "" : `${name}.json, `}${name}.md, ${name}.svg, ${summaryName}${!renderOnly && report.seconds ? ` in ${report.seconds.total} s` : ""}`);
if (!o.save) console.log("(not saved: --save writes the committed bench/results/ and bench/README.md)");
