// Rendering of a bench run: the ratio checks, the Markdown tables and two SVG charts
// (hand-written): the full chart (grouped bars on linear axes, one panel per scenario and
// measure, a colour per runtime, the value written over bars too short to read) and the
// compact summary for the README (tracker vs baselines per runtime, horizontal bars).
// Input: { quick, machine, versions, load, seconds, about, rows }.

import {
  find,
  fmtBytes,
  fmtInt,
  fmtMs,
  fmtRate,
  largest,
  MEMORY_SCENARIOS,
  RATE_SCENARIOS,
  ROWS,
  runtimesOf,
  TRACKERS,
  usable,
} from "./report_data.mjs";
export { fmtRate };
export { summarySvg, svg } from "./report_svg.mjs";

/**
 * The ratio checks of one run, per runtime: { status: PASS|FAIL|SKIP, runtime, text }. A
 * quick run's targets (set for the full sizes) are informational: status `info`, the
 * text saying whether the target was met at the reduced size.
 */
export function checks(report) {
  const out = [];
  const add = (status, runtime, text) =>
    out.push(
      report.quick && status !== "SKIP"
        ? { status: "info", runtime, text: `${text} (${status === "PASS" ? "met" : "not met"} at the reduced size)` }
        : { status, runtime, text },
    );
  for (const rt of runtimesOf(report)) {
    // random at 1,000,000: js and wasm ≥ 30× set-watermark and ≥ 100× deque-map
    const nR = largest(report, "random");
    for (const eng of ["js", "wasm"]) {
      const t = find(report, rt, eng, "random", nR);
      for (const [base, k] of [["set-watermark", 30], ["deque-map", 100]]) {
        const b = find(report, rt, base, "random", nR);
        const what = `random n=${fmtInt(nR)}: ${eng} ≥ ${k}× ${base}`;
        if (!usable(t)) add("SKIP", rt, `${what}: ${eng} not measured (${t?.note ?? "no row"})`);
        else if (!usable(b)) add("SKIP", rt, `${what}: ${base} not measured`);
        else {
          const x = t.ops_per_sec / b.ops_per_sec;
          add(x >= k ? "PASS" : "FAIL", rt, `${what}: ${fmtRate(t.ops_per_sec)} / ${fmtRate(b.ops_per_sec)} = ${x.toFixed(1)}×`);
        }
      }
    }
    // slow-head at 10,000,000: final advance ≤ 1 ms; set-watermark ≥ 20× the tracker's memory
    const nS = largest(report, "slow-head");
    const sw = find(report, rt, "set-watermark", "slow-head", nS);
    for (const eng of TRACKERS) {
      const t = find(report, rt, eng, "slow-head", nS);
      const what = `slow-head n=${fmtInt(nS)}: ${eng} final advance ≤ 1 ms`;
      if (!usable(t)) add("SKIP", rt, `${what}: not measured (${t?.note ?? "no row"})`);
      else add(t.final_advance_ms <= 1 ? "PASS" : "FAIL", rt, `${what}: ${fmtMs(t.final_advance_ms)} ms (median, warm)`);
    }
    for (const eng of ["js", "wasm"]) {
      const t = find(report, rt, eng, "slow-head", nS);
      const what = `slow-head n=${fmtInt(nS)}: set-watermark memory ≥ 20× ${eng}`;
      if (!usable(t) || !usable(sw)) add("SKIP", rt, `${what}: not measured`);
      else {
        const x = sw.bytes_per_pending / t.bytes_per_pending;
        add(
          x >= 20 ? "PASS" : "FAIL",
          rt,
          `${what}: ${fmtBytes(sw.bytes_per_pending)} vs ${fmtBytes(t.bytes_per_pending)} B per held record = ${x.toFixed(0)}×`,
        );
      }
    }
    // gaps: the tracker never stalls, set-watermark is reported stalled
    for (const sc of ["gaps-txn", "gaps-compacted"]) {
      const n = largest(report, sc);
      for (const eng of ["js", "wasm"]) {
        const t = find(report, rt, eng, sc, n);
        const what = `${sc} n=${fmtInt(n)}: ${eng} never stalls`;
        if (!usable(t)) add("SKIP", rt, `${what}: not measured (${t?.note ?? "no row"})`);
        else add(t.stalled === false ? "PASS" : "FAIL", rt, `${what}: ${t.stalled ? "stalled" : `ended at the last batch's next, ${fmtRate(t.ops_per_sec)}`}`);
      }
      const b = find(report, rt, "set-watermark", sc, n);
      const what = `${sc} n=${fmtInt(n)}: set-watermark reported stalled`;
      if (!usable(b)) add("SKIP", rt, `${what}: not measured`);
      else add(b.stalled === true ? "PASS" : "FAIL", rt, `${what}: ${b.stalled ? b.note.split(";")[0] : "did not stall"}`);
    }
    // bytes per pending record ≤ 0.5 for dense offsets at 10,000,000
    const nM = largest(report, "memory-dense");
    for (const eng of ["js", "wasm"]) {
      const t = find(report, rt, eng, "memory-dense", nM);
      const what = `memory-dense n=${fmtInt(nM)}: ${eng} ≤ 0.5 B per pending record`;
      if (!t || t.bytes_per_pending === null) add("SKIP", rt, `${what}: not measured (${t?.note ?? "no row"})`);
      else add(t.bytes_per_pending <= 0.5 ? "PASS" : "FAIL", rt, `${what}: ${fmtBytes(t.bytes_per_pending)} B (stats().bytes)`);
      if (t?.measured_bytes_per_pending !== undefined) {
        const m = t.measured_bytes_per_pending;
        const how = eng === "js" ? "heap growth" : "growth of the WASM linear memory used";
        add(m <= 0.5 ? "PASS" : "FAIL", rt, `memory-dense n=${fmtInt(nM)}: ${eng} cross-check ≤ 0.5 B: ${fmtBytes(m)} B (${how})`);
      }
    }
  }
  return out;
}

function cell(row, scenario) {
  if (!row) return "";
  if (String(row.note).startsWith("skipped") || String(row.note).startsWith("n/a")) return "n/a";
  if (String(row.note).startsWith("ERROR")) return "error";
  if (MEMORY_SCENARIOS.includes(scenario)) return row.bytes_per_pending < 0.01 ? "≈0 B" : `${fmtBytes(row.bytes_per_pending)} B`;
  let s = fmtRate(row.ops_per_sec);
  if (scenario === "slow-head") s += ` · final ${fmtMs(row.final_advance_ms)} ms · ${fmtBytes(row.bytes_per_pending)} B`;
  if (row.stalled) s = `**stalled** (${s})`;
  return s;
}

/** The Markdown report: machine, chart, checks, a table per scenario (a column per runtime), notes. */
export function markdown(report) {
  const rts = runtimesOf(report);
  const m = report.machine ?? {};
  const out = [];
  out.push(`# offset-frontier benchmark — ${report.quick ? "quick run (reduced sizes)" : "full run"}`);
  out.push("");
  out.push(`- Machine: ${m.cpu}, ${m.memory_gib} GiB, ${m.os}`);
  out.push(`- Runtimes: ${rts.map((rt) => `${rt} ${report.versions?.[rt] ?? "?"}`).join("; ")}`);
  out.push(`- Commit ${m.commit}, ${m.date}; took ${report.seconds?.total ?? "?"} s (${rts.map((rt) => `${rt} ${report.seconds?.[rt]} s`).join(", ")})`);
  out.push(`- 1-minute load average before → after each runtime: ${rts.map((rt) => `${rt} ${report.load?.[rt]?.join(" → ")}`).join(", ")} (2 cores: anything above ~1 means other work competed)`);
  out.push("- Rates are records per second: each record registered once (in batches of 500) and completed once, median pass. Memory is bytes per record held. Method: `bench/README.md`.");
  out.push("");
  out.push(`![throughput and memory per scenario, linear axes](${report.quick ? "quick" : "latest"}.svg)`);
  out.push("");
  out.push("## Ratio checks");
  out.push("");
  if (report.quick) out.push("_Quick run: sizes are reduced, while the targets are set for the full sizes: informational only._\n");
  for (const c of checks(report)) out.push(`- **${c.status}** ${c.runtime}: ${c.text}`);
  out.push("");
  const order = [...RATE_SCENARIOS, ...MEMORY_SCENARIOS];
  const rank = (s) => (order.includes(s) ? order.indexOf(s) : order.length);
  const scenarios = [...new Set(report.rows.map((r) => r.scenario))].filter((s) => s !== "(process)").sort((a, b) => rank(a) - rank(b));
  for (const sc of scenarios) {
    const sizes = [...new Set(report.rows.filter((r) => r.scenario === sc).map((r) => r.n))].sort((a, b) => a - b);
    for (const n of sizes) {
      out.push(`## ${sc}, n = ${fmtInt(n)}`);
      out.push("");
      if (report.about?.[sc]) out.push(`${report.about[sc]}.`, "");
      out.push(`| row | ${rts.join(" | ")} |`);
      out.push(`|---|${rts.map(() => "---:").join("|")}|`);
      for (const eng of ROWS) {
        if (!report.rows.some((r) => r.engine === eng && r.scenario === sc && r.n === n)) continue;
        out.push(`| ${eng} | ${rts.map((rt) => cell(find(report, rt, eng, sc, n), sc)).join(" | ")} |`);
      }
      out.push("");
      out.push("<details><summary>notes</summary>\n");
      for (const rt of rts) {
        for (const eng of ROWS) {
          const r = find(report, rt, eng, sc, n);
          if (r) out.push(`- ${rt} ${eng}: ${r.note}`);
        }
      }
      out.push("\n</details>\n");
    }
  }
  if (report.codec?.length) out.push(codecMarkdown(report.codec));
  const errors = report.rows.filter((r) => r.scenario === "(process)");
  if (errors.length) {
    out.push("## Errors", "");
    for (const e of errors) out.push(`- ${e.note}`);
  }
  return out.join("\n") + "\n";
}


/** The results section of bench/README.md: chart, headline tables (a column per runtime), the checks that did not pass. */
export function readmeSection(report) {
  const rts = runtimesOf(report);
  const m = report.machine ?? {};
  const out = [];
  const mins = Math.round((report.seconds?.total ?? 0) / 60);
  out.push("### Results");
  out.push("");
  out.push("![tracker vs baselines per runtime: records per second and bytes per held record](results/summary.svg)");
  out.push("");
  out.push("Every scenario, measure and runtime (`partitions`, `batches` and the rest too): [`results/latest.svg`](results/latest.svg).");
  out.push("");
  out.push(
    `Full run of ${m.date?.slice(0, 10)} on ${m.cpu} (2 vCPU), ${m.memory_gib} GiB, ${m.os}; ` +
      `${rts.map((rt) => `${rt[0].toUpperCase()}${rt.slice(1)} ${report.versions?.[rt]}`).join(", ")}; ` +
      `commit ${m.commit}; ${mins} minutes. The machine was shared: 1-minute load average ` +
      `${rts.map((rt) => `${report.load?.[rt]?.join("→")} during ${rt}`).join(", ")} on 2 cores. ` +
      "Every table of the run, with each row's median and range: [`results/latest.md`](results/latest.md); raw rows: [`results/latest.json`](results/latest.json).",
  );
  out.push("");
  const table = (title, scenario, fmt, rows = ROWS) => {
    const n = largest(report, scenario);
    out.push(`**${title}** (n = ${fmtInt(n)})`);
    out.push("");
    out.push(`| row | ${rts.join(" | ")} |`);
    out.push(`|---|${rts.map(() => "---:").join("|")}|`);
    for (const eng of rows) {
      const cells = rts.map((rt) => {
        const r = find(report, rt, eng, scenario, n);
        if (!r) return "";
        if (String(r.note).startsWith("skipped") || String(r.note).startsWith("n/a")) return "n/a";
        if (String(r.note).startsWith("ERROR")) return "error";
        return fmt(r);
      });
      if (cells.some((c) => c !== "")) out.push(`| ${eng} | ${cells.join(" | ")} |`);
    }
    out.push("");
  };
  const rate = (r) => (r.stalled ? `stalled (${fmtRate(r.ops_per_sec)})` : fmtRate(r.ops_per_sec));
  const bytes = (r) => (r.bytes_per_pending < 0.01 ? "≈0 B" : `${fmtBytes(r.bytes_per_pending)} B`);
  table("random: records/s, register + complete in a random order", "random", rate);
  table("slow-head: the final advance past every held record", "slow-head", (r) => `${fmtMs(r.final_advance_ms)} ms`);
  table("slow-head: bytes per held record just before it", "slow-head", bytes);
  table("gaps-txn: records/s, completed by offset, transaction-marker gaps", "gaps-txn", rate);
  table("memory-dense: bytes per pending record", "memory-dense", bytes);
  // The README keeps the checks that did not pass; latest.md lists every one with its figures.
  const all = checks(report);
  const failed = all.filter((c) => c.status !== "PASS");
  out.push(
    `**Ratio checks** (one run, each runtime): ${all.length - failed.length} of ${all.length} pass; ` +
      `every check with its figures: [\`results/latest.md\`](results/latest.md)${failed.length > 0 ? ". Not passed:" : "."}`,
  );
  out.push("");
  for (const c of failed) out.push(`- **${c.status}** ${c.runtime}: ${c.text}`);
  if (failed.length > 0) out.push("");
  return out.join("\n");
}

const fmtUs = (us) => (us === null || us === undefined ? "—" : us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : us >= 10 ? `${us.toFixed(0)} µs` : `${us.toFixed(2)} µs`);

/**
 * The codec section (bench/codec.bench.ts, one report per runtime): sizes (the same on every
 * runtime; checked), what each side keeps, then encode/decode time per commit per runtime.
 */
export function codecMarkdown(codec, { heading = true } = {}) {
  if (!codec?.length) return "";
  const out = [];
  const first = codec[0];
  const int = (n) => n.toLocaleString("en-US");
  if (heading) out.push("## Completed-set codec vs Parallel Consumer 0.5.3.3 (commit metadata)", "");
  else out.push(`Run of ${first.date?.slice(0, 10)}: ${codec.map((c) => c.version).join(", ")}.`, "");
  out.push("Characters of commit metadata for the same state (committed offset = the lowest unfinished offset, the map up to the highest finished one); PC drops its map above 4,096 characters, ours keeps the longest prefix that fits. Method: `bench/codec.bench.ts`, baseline: `bench/baselines/pc_encodings.ts`.");
  out.push("");
  out.push("| # | pattern | ours: chars (format) | PC: chars (encoding) | PC sends it? | ours keeps (finished records) | PC + zstd stand-in (deflate) |");
  out.push("|---|---|---:|---:|---|---:|---:|");
  first.rows.forEach((r, i) => {
    const kept = r.ours.complete ? `all ${int(r.ours.keptRecords)}` : `${int(r.ours.keptRecords)} of ${int(r.finishedRecords)} (prefix; the whole set: ${int(r.ours.fullChars)} chars)`;
    const sent = r.pc.sent ? "yes" : "**no: dropped** (> 4,096)";
    out.push(`| ${i + 1} | ${r.pattern} | ${int(r.ours.chars)} (${r.ours.format}) | ${int(r.pc.chars)} (${r.pc.encoding}) | ${sent} | ${kept} | ${r.pc.chars > 250 ? `~${int(r.pc.deflateStandInChars)}` : "—"} |`);
  });
  out.push("");
  const same = codec.every((c) => c.rows.every((r, i) => r.ours.chars === first.rows[i].ours.chars && r.pc.chars === first.rows[i].pc.chars));
  out.push(same ? `Sizes are identical on ${codec.map((c) => c.runtime).join(", ")}.` : "**Sizes differ between runtimes** (a bug).");
  for (const [k, s] of Object.entries(first.seeds ?? {})) out.push(`Random ${k}: ours ≤ PC on ${s.oursNotLarger} of ${s.seeds} seeds (largest difference ours − PC: ${s.worst} chars).`);
  out.push("");
  out.push("**Time per commit** (median of batches; ours: encode / decode; PC: its per-offset encode loop re-implemented in JS, not timed where it would visit billions of offsets)");
  out.push("");
  out.push(`| # | ${codec.map((c) => `${c.runtime}: ours enc / dec | ${c.runtime}: PC enc`).join(" | ")} |`);
  out.push(`|---|${codec.map(() => "---:|---:").join("|")}|`);
  first.rows.forEach((_, i) => {
    out.push(`| ${i + 1} | ${codec.map((c) => `${fmtUs(c.rows[i].ours.encodeUs)} / ${fmtUs(c.rows[i].ours.decodeUs)} | ${fmtUs(c.rows[i].pc.encodeUs)}`).join(" | ")} |`);
  });
  out.push("");
  out.push(`1-minute load average before → after: ${codec.map((c) => `${c.runtime} ${c.load?.join(" → ")}`).join(", ")} (2 cores).`);
  out.push("");
  return out.join("\n");
}
