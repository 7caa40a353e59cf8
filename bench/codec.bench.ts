/**
 * The completed-set codec against Confluent Parallel Consumer 0.5.3.3's offset-map encodings
 * (`bench/baselines/pc_encodings.ts`): metadata size in characters, what each keeps under the
 * broker's 4,096-character limit, and the encoding time per commit.
 *
 *     node --import tsx bench/codec.bench.ts            # plain table, writes bench/results/tmp/codec.json
 *     node_modules/.bin/bun bench/codec.bench.ts
 *     node_modules/.bin/deno run -A bench/codec.bench.ts
 *
 * Options: `--quick` (fewer timing batches), `--emit` (for bench/run.mjs: one `@@codec` JSON
 * line, no file written), `--out FILE`, `--save` (write the committed bench/results/codec.json).
 *
 * Both sides encode the same state: the committed offset is the lowest unfinished offset (PC's
 * `getOffsetToCommit`), the map covers up to the highest finished offset, offsets never
 * delivered count as finished. PC's time is its per-offset loop (`pcEncode`, as
 * `OffsetSimultaneousEncoder.invoke` runs it, here in JS); over 20,000,000 offsets it is not
 * timed (its size then comes from `pcEncodeFromRuns`, the same bytes built from the runs).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { deflateRawSync } from "node:zlib";
import { decodeCompletedSet, encodeCompletedSet, type RunsInput } from "../core/tracker/completed_set/mod.ts";
import { pcDeflateStandIn, pcEncode, pcEncodeFromRuns, PC_MAX_METADATA, pcSelfCheck } from "./baselines/pc_encodings.ts";
import { cli, runtimeName } from "./cli.ts";
import { rng } from "../test/unit/random.ts";

const o = cli(
  "codec.bench",
  `usage: node --import tsx bench/codec.bench.ts [--quick] [--emit] [--out FILE] [--save]
       (bun bench/codec.bench.ts …, deno run -A bench/codec.bench.ts …)

The completed-set codec against Parallel Consumer 0.5.3.3's encodings: sizes, what fits
in 4,096 characters, encoding time per commit. Prints a table and writes
bench/results/tmp/codec.json.

  --quick              fewer timing batches
  --emit               for bench/run.mjs: one @@codec JSON line, no file written
  --out FILE           write the JSON there instead
  --save               write the committed bench/results/codec.json instead
  -h, --help           this text`,
  { quick: { type: "boolean" }, emit: { type: "boolean" }, out: { type: "string" }, save: { type: "boolean" } },
);
const QUICK = o.quick === true;
const EMIT = o.emit === true;
const TOPIC = "orders";
const FAITHFUL_LIMIT = 20_000_000; // offsets PC's per-offset loop is timed over

/** One committed state: delivered offsets, which are finished. */
interface Pattern {
  name: string;
  about: string;
  input: RunsInput;
  /** delivered records in [base, end) that are finished */
  finishedRecords: number;
  /** finished delivered offsets, sorted (to count the records a prefix keeps) */
  finishedOffsets: Float64Array;
}

/**
 * Builds a pattern from delivered offsets (sorted) and their state. base = the lowest unfinished
 * record, end = one past the highest finished one; gaps count as finished.
 */
function pattern(name: string, about: string, offsets: ArrayLike<number>, finished: (i: number) => boolean): Pattern {
  let first = -1, last = -1;
  for (let i = 0; i < offsets.length; i++) {
    if (!finished(i) && first < 0) first = i;
    if (finished(i)) last = i;
  }
  const base = offsets[first], end = offsets[last] + 1;
  const runs: number[] = [];
  const done: number[] = [];
  for (let i = first; i <= last; i++) {
    if (finished(i)) {
      done.push(offsets[i]);
      continue;
    }
    const o = offsets[i];
    const n = runs.length;
    if (n > 0 && runs[n - 2] + runs[n - 1] === o) runs[n - 1]++;
    else runs.push(o, 1);
  }
  return {
    name,
    about,
    input: { base, end, runs: Float64Array.from(runs), count: runs.length / 2 },
    finishedRecords: done.length,
    finishedOffsets: Float64Array.from(done),
  };
}

const seq = (start: number, n: number): Float64Array => Float64Array.from({ length: n }, (_, i) => start + i);

function randomWindow(seed: number, window: number, unfinished: number, start = 1_000_000): Pattern {
  const r = rng(seed);
  const open = new Set<number>();
  while (open.size < unfinished) open.add(r(window));
  return pattern(
    `${(window - unfinished).toLocaleString("en-US")} completions in a window of ${window.toLocaleString("en-US")} (random)`,
    `${unfinished.toLocaleString("en-US")} random unfinished among ${window.toLocaleString("en-US")}`,
    seq(start, window),
    (i) => !open.has(i),
  );
}

function stuckHead(behind: number): Pattern {
  return pattern(
    `a stuck head with ${behind.toLocaleString("en-US")} finished behind it`,
    "the lowest record unfinished, every later one finished",
    seq(5_000_000, behind + 1),
    (i) => i > 0,
  );
}

function compacted(seed: number, records: number, maxGap: number, unfinishedPct: number): Pattern {
  const r = rng(seed);
  const offsets = new Float64Array(records);
  let at = 1_000_000;
  for (let i = 0; i < records; i++) {
    offsets[i] = at;
    at += 1 + r(maxGap + 1);
  }
  const open = new Uint8Array(records);
  for (let i = 0; i < records; i++) open[i] = r(100) < unfinishedPct ? 1 : 0;
  open[0] = 1;
  return pattern(
    `compacted: ${records.toLocaleString("en-US")} records, gaps up to ${maxGap.toLocaleString("en-US")}`,
    `${records.toLocaleString("en-US")} delivered offsets with random gaps of 0–${maxGap.toLocaleString("en-US")} (compaction), ${unfinishedPct} % unfinished`,
    offsets,
    (i) => open[i] === 0,
  );
}

/** Median time per call in microseconds: a warm-up, then batches of calls, each batch ≥ 2 ms (or one call). */
function timeUs(fn: () => unknown, batches: number): number {
  const warm = performance.now();
  for (let i = 0; i < 3 || (performance.now() - warm < (QUICK ? 30 : 150) && i < 100_000); i++) fn();
  let k = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) fn();
    const dt = performance.now() - t0;
    if (dt >= 2 || k >= 1 << 20) break;
    k *= dt < 0.2 ? 16 : 2;
  }
  const per: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) fn();
    per.push(((performance.now() - t0) * 1000) / k);
  }
  per.sort((a, b) => a - b);
  return per[(per.length - 1) >> 1];
}

/** One pattern's row of the report. */
interface CodecRow {
  pattern: string;
  about: string;
  /** offsets of [base, end) */
  span: number;
  unfinishedRuns: number;
  finishedRecords: number;
  ours: {
    chars: number;
    format: string;
    /** the whole set (no budget) */
    fullChars: number;
    complete: boolean;
    /** finished offsets claimed (gaps included) and finished records covered */
    keptOffsets: number;
    keptRecords: number;
    encodeUs: number;
    decodeUs: number;
  };
  pc: {
    encoding: string;
    /** base64 characters of the winning encoding */
    chars: number;
    sent: boolean;
    /** finished records the next owner learns about (0 when dropped) */
    keptRecords: number;
    deflateStandInChars: number | null;
    encodeUs: number | null;
    timing: string;
  };
}

function measure(p: Pattern, batches: number): CodecRow {
  const { input } = p;
  const e = encodeCompletedSet(TOPIC, 0, input);
  const full = encodeCompletedSet(TOPIC, 0, input, { budget: 65536 });
  if (!e || !full) throw new Error(`${p.name}: nothing encoded`);
  const d = decodeCompletedSet(TOPIC, 0, input.base, e.metadata);
  if (!d.ok) throw new Error(`${p.name}: ${d.reason}`);
  if (d.set.finishedCount() !== e.finished || d.set.end !== e.end) throw new Error(`${p.name}: decoded claim differs`);
  // records kept: finished delivered offsets below end
  let keptRecords = 0;
  for (const o of p.finishedOffsets) if (o < e.end) keptRecords++;
  const encodeUs = timeUs(() => encodeCompletedSet(TOPIC, 0, input), batches);
  const decodeUs = timeUs(() => decodeCompletedSet(TOPIC, 0, input.base, e.metadata), batches);

  const span = input.end - input.base;
  const fromRuns = pcEncodeFromRuns(input.base, input.end, input.runs, input.count);
  if (!fromRuns) throw new Error(`${p.name}: PC cannot encode`);
  let pcUs: number | null = null;
  let timing = `not timed: PC's loop visits all ${span.toLocaleString("en-US")} offsets`;
  if (span <= FAITHFUL_LIMIT) {
    const open = new Set<number>();
    for (let i = 0; i < input.count; i++) for (let o = input.runs[2 * i]; o < input.runs[2 * i] + input.runs[2 * i + 1]; o++) open.add(o);
    const faithful = pcEncode(input.base, input.end - 1, open);
    if (!faithful || faithful.metadata !== fromRuns.metadata) throw new Error(`${p.name}: PC's loop and the runs disagree`);
    pcUs = timeUs(() => pcEncode(input.base, input.end - 1, open), span > 100_000 ? Math.max(3, batches >> 2) : batches);
    timing = "PC's per-offset loop (pcEncode), re-implemented in JS";
  }
  return {
    pattern: p.name,
    about: p.about,
    span,
    unfinishedRuns: input.count,
    finishedRecords: p.finishedRecords,
    ours: {
      chars: e.metadata.length,
      format: e.format,
      fullChars: full.metadata.length,
      complete: e.end === input.end,
      keptOffsets: e.finished,
      keptRecords,
      encodeUs,
      decodeUs,
    },
    pc: {
      encoding: fromRuns.encoding,
      chars: fromRuns.metadata.length,
      sent: fromRuns.sent,
      keptRecords: fromRuns.sent ? p.finishedRecords : 0,
      deflateStandInChars: pcDeflateStandIn(fromRuns.bytes, (b) => deflateRawSync(b, { level: 9 })),
      encodeUs: pcUs,
      timing,
    },
  };
}

/** Ours ≤ theirs over many seeds of the random patterns (sizes only). */
function seeds(window: number, unfinished: number, count: number): { seeds: number; oursNotLarger: number; worst: number } {
  let ok = 0, worst = -Infinity;
  for (let s = 1; s <= count; s++) {
    const p = randomWindow(s * 7919, window, unfinished);
    const e = encodeCompletedSet(TOPIC, 0, p.input)!;
    const pc = pcEncodeFromRuns(p.input.base, p.input.end, p.input.runs, p.input.count)!;
    if (e.metadata.length <= pc.metadata.length) ok++;
    worst = Math.max(worst, e.metadata.length - pc.metadata.length);
  }
  return { seeds: count, oursNotLarger: ok, worst };
}

/** The patterns, in the brief's order (plus one where both sides overflow). */
function patterns(): Pattern[] {
  return [
    randomWindow(1, 40, 10),
    randomWindow(2, 10_000, 2_000),
    stuckHead(50_000),
    stuckHead(1_000_000),
    compacted(5, 5_000, 1_000_000, 10),
    randomWindow(6, 100_000, 20_000),
  ];
}

const fmtUs = (us: number | null): string => (us === null ? "—" : us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : us >= 10 ? `${us.toFixed(0)} µs` : `${us.toFixed(2)} µs`);
const int = (n: number): string => n.toLocaleString("en-US");

/** The plain table. */
function table(rows: CodecRow[]): string {
  const out = [
    "| # | pattern | ours: chars (format) | PC: chars (encoding) | PC sends it? | ours keeps (finished records) | ours encode | ours decode | PC encode |",
    "|---|---|---:|---:|---|---:|---:|---:|---:|",
  ];
  rows.forEach((r, i) => {
    const kept = r.ours.complete ? `all ${int(r.ours.keptRecords)}` : `${int(r.ours.keptRecords)} of ${int(r.finishedRecords)} (prefix; whole set ${int(r.ours.fullChars)} chars)`;
    out.push(
      `| ${i + 1} | ${r.pattern} | ${int(r.ours.chars)} (${r.ours.format}) | ${int(r.pc.chars)} (${r.pc.encoding}) | ${r.pc.sent ? "yes" : `**no: dropped** (> ${int(PC_MAX_METADATA)})`} | ${kept} | ${fmtUs(r.ours.encodeUs)} | ${fmtUs(r.ours.decodeUs)} | ${fmtUs(r.pc.encodeUs)} |`,
    );
  });
  return out.join("\n");
}

/** Runs every pattern; returns the report. */
function run(quick: boolean): { runtime: string; rows: CodecRow[]; seeds: Record<string, ReturnType<typeof seeds>> } {
  pcSelfCheck();
  const batches = quick ? 5 : 21;
  const rows = patterns().map((p) => measure(p, batches));
  return {
    runtime: runtimeName(),
    rows,
    seeds: { "30 of 40": seeds(40, 10, quick ? 200 : 2000), "2,000 of 10,000": seeds(10_000, 2_000, quick ? 20 : 100) },
  };
}

main();

/** Runs the patterns, prints the table (or the `@@codec` line) and writes the JSON. */
function main(): void {
  const loadBefore = os.loadavg()[0];
  const result = run(QUICK);
  const version = typeof (globalThis as { Bun?: { version: string } }).Bun !== "undefined"
    ? `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
    : typeof (globalThis as { Deno?: unknown }).Deno !== "undefined"
    ? `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
    : `node ${process.version}`;
  const load = [loadBefore, os.loadavg()[0]].map((l) => +l.toFixed(2));
  const report = { date: new Date().toISOString(), version, quick: QUICK, load, ...result };
  if (EMIT) console.log(`@@codec ${JSON.stringify(report)}`);
  else {
    console.log(`completed-set codec vs Parallel Consumer 0.5.3.3 (${version}${QUICK ? ", quick" : ""}; 1-minute load ${load.join(" → ")}); sizes in characters, budget ${PC_MAX_METADATA}\n`);
    console.log(table(result.rows));
    for (const [k, s] of Object.entries(result.seeds)) console.log(`\nrandom ${k}: ours ≤ PC on ${s.oursNotLarger} of ${s.seeds} seeds (largest difference ours − PC: ${s.worst} chars)`);
    for (const r of result.rows) if (r.pc.deflateStandInChars !== null && r.pc.chars > 250) console.log(`PC + zstd stand-in (deflate) on "${r.pattern}": ~${int(r.pc.deflateStandInChars)} chars`);
    const results = join(dirname(fileURLToPath(import.meta.url)), "results");
    const file = o.out ?? join(o.save ? results : join(results, "tmp"), "codec.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ runs: [report] }, null, 1) + "\n");
    console.log(`\nwrote ${file}`);
  }
}
