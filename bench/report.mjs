// Rendering of a bench run: the ratio checks, the Markdown tables and two SVG charts
// (hand-written): the full chart (grouped bars on linear axes, one panel per scenario and
// measure, a colour per runtime, the value written over bars too short to read) and the
// compact summary for the README (tracker vs baselines per runtime, horizontal bars).
// Input: { quick, machine, versions, load, seconds, about, rows }.

const RUNTIMES = ["node", "bun", "deno"];
const ROWS = ["js", "wasm", "wasm-batch", "set-watermark", "deque-map", "sorted-map"];
const TRACKERS = ["js", "wasm", "wasm-batch"];
const RATE_SCENARIOS = ["in-order", "random", "slow-head", "gaps-txn", "gaps-compacted", "partitions", "batches", "steady-64"];
const MEMORY_SCENARIOS = ["memory-dense", "memory-txn", "memory-compacted"];
const COLORS = { node: "#2e7d32", bun: "#d97706", deno: "#1d4ed8" };

const fmtInt = (n) => n.toLocaleString("en-US");
export function fmtRate(r) {
  if (r === null || r === undefined) return "—";
  if (r >= 1e6) return `${(r / 1e6).toPrecision(3)} M/s`;
  return `${(r / 1e3).toPrecision(3)} k/s`;
}
const fmtBytes = (b) => (b === null || b === undefined ? "—" : b < 1 ? b.toFixed(3) : b < 10 ? b.toFixed(2) : b.toFixed(1));
const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms >= 0.01 ? ms.toFixed(3) : ms.toFixed(4));

function runtimesOf(report) {
  return RUNTIMES.filter((rt) => report.rows.some((r) => r.runtime === rt));
}
function largest(report, scenario) {
  return Math.max(0, ...report.rows.filter((r) => r.scenario === scenario).map((r) => r.n));
}
function find(report, runtime, engine, scenario, n = largest(report, scenario)) {
  return report.rows.find((r) => r.runtime === runtime && r.engine === engine && r.scenario === scenario && r.n === n);
}
const usable = (row) => row && row.ops_per_sec !== null && !String(row.note).startsWith("ERROR");

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

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An axis label: `20M`, `1.5k`, `40 B`, `2000 ms`. */
function siLabel(v, unit) {
  const p = (x) => String(+x.toPrecision(3));
  if (unit === "B" || unit === "ms") return `${p(v)} ${unit}`;
  if (v >= 1e9) return `${p(v / 1e9)}G`;
  if (v >= 1e6) return `${p(v / 1e6)}M`;
  if (v >= 1e3) return `${p(v / 1e3)}k`;
  return p(v);
}

/** A value written over a bar: `75.0 M/s`, `0.21 B`, `3661 ms`. */
function shownValue(v, unit) {
  return unit === "B" ? `${fmtBytes(v)} B` : unit === "ms" ? `${fmtMs(v)} ms` : fmtRate(v);
}

/** Linear ticks from 0: a step of 1, 2 or 5 × 10^k giving 3–6 lines, and the axis top. */
function linearTicks(max) {
  if (!(max > 0)) return { step: 1, top: 1 };
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  return { step, top: Math.ceil(max / step - 1e-9) * step };
}

/** What a panel shows: the value of a row, its unit, its subtitle. */
const METRICS = {
  rate: { value: (r) => r.ops_per_sec, unit: "", title: "records per second (higher is better)" },
  bytes: { value: (r) => (r.bytes_per_pending < 0.01 ? 0 : r.bytes_per_pending), unit: "B", title: "bytes per pending record (lower is better)" },
  held: { value: (r) => (r.bytes_per_pending < 0.01 ? 0 : r.bytes_per_pending), unit: "B", title: "bytes per held record (lower is better)" },
  final: { value: (r) => r.final_advance_ms, unit: "ms", title: "time of the final advance past every held record (lower is better)" },
};

/**
 * One panel: grouped bars on a linear axis from 0 (a group per row, a bar per runtime).
 * A group whose bars are too short to read gets its value written above it; a group that
 * is not applicable (or holds nothing) gets one label for the whole group.
 */
function panel(report, scenario, x0, y0, w, h, rts, metric) {
  const n = largest(report, scenario);
  const { value, unit } = METRICS[metric];
  const get = (rt, eng) => {
    const r = find(report, rt, eng, scenario, n);
    if (!r) return null;
    const v = value(r);
    return v === null || v === undefined || String(r.note).startsWith("ERROR") ? { v: null, r } : { v, r };
  };
  const engines = ROWS.filter((e) => report.rows.some((r) => r.engine === e && r.scenario === scenario));
  const values = [];
  for (const e of engines) for (const rt of rts) {
    const g = get(rt, e);
    if (g?.v > 0) values.push(g.v);
  }
  const parts = [];
  parts.push(`<text x="${x0}" y="${y0 + 14}" class="t">${esc(`${scenario}, n = ${fmtInt(n)}`)}</text>`);
  parts.push(`<text x="${x0}" y="${y0 + 29}" class="s">${esc(METRICS[metric].title)}</text>`);
  const px = x0 + 50, py = y0 + 46, pw = w - 56, ph = h - 46 - 40;
  if (values.length === 0) {
    parts.push(`<text x="${px + pw / 2}" y="${py + ph / 2}" class="na" text-anchor="middle">no data</text>`);
    return parts.join("\n");
  }
  const { step, top } = linearTicks(Math.max(...values));
  const y = (v) => py + ph - (v / top) * ph;
  for (let v = 0; v <= top + step / 2; v += step) {
    parts.push(`<line x1="${px}" x2="${px + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="g"/>`);
    parts.push(`<text x="${px - 4}" y="${(y(v) + 3).toFixed(1)}" class="a" text-anchor="end">${esc(siLabel(v, unit))}</text>`);
  }
  parts.push(`<line x1="${px}" x2="${px}" y1="${py}" y2="${py + ph}" class="ax"/>`);
  const gw = pw / engines.length, bw = Math.min(18, (gw - 12) / rts.length);
  engines.forEach((e, i) => {
    const gx = px + i * gw + (gw - bw * rts.length) / 2;
    const cx = px + i * gw + gw / 2;
    const got = rts.map((rt) => get(rt, e));
    const drawn = got.filter((g) => g && g.v > 0);
    if (drawn.length === 0) {
      // One label for the group: not applicable, or nothing held (≈0), or not measured.
      const na = got.some((g) => g && String(g.r.note).startsWith("n/a"));
      const zero = got.some((g) => g && g.v === 0);
      const label = na ? "n/a" : zero ? "≈ 0" : "not measured";
      parts.push(`<text x="${cx.toFixed(1)}" y="${py + ph - 4}" class="na" text-anchor="middle">${label}</text>`);
    }
    got.forEach((g, j) => {
      if (!g || !(g.v > 0)) return;
      const rt = rts[j];
      const bx = gx + j * bw;
      const yt = y(g.v);
      const stalled = g.r.stalled === true;
      const fill = stalled ? `url(#hatch-${rt})` : COLORS[rt];
      const tip = `${rt} ${e}: ${shownValue(g.v, unit)}${stalled ? " (STALLED)" : ""}`;
      const hgt = Math.max(1, py + ph - yt);
      parts.push(
        `<rect x="${bx.toFixed(1)}" y="${(py + ph - hgt).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${hgt.toFixed(1)}" fill="${fill}" stroke="${COLORS[rt]}"><title>${esc(tip)}</title></rect>`,
      );
    });
    if (drawn.length > 0) {
      const tallest = Math.max(...drawn.map((g) => g.v));
      const above = y(tallest) - 4;
      const notes = [];
      if (tallest < top * 0.12) {
        // Too short to read against the axis: write the range of the runtimes' values.
        // Written as the runtimes' range when it fits the group's width, else as their maximum.
        const lo = Math.min(...drawn.map((g) => g.v));
        const range = `${shownValue(lo, unit)}–${shownValue(tallest, unit)}`.replace(/ (M\/s|k\/s|B|ms)–/, "–");
        notes.push(lo === tallest ? shownValue(lo, unit) : range.length * 5.6 <= gw - 6 ? range : `≤ ${shownValue(tallest, unit)}`);
      }
      if (drawn.some((g) => g.r.stalled === true)) notes.push("stalled");
      notes.reverse().forEach((t, k) => {
        parts.push(`<text x="${cx.toFixed(1)}" y="${(above - k * 12).toFixed(1)}" class="${t === "stalled" ? "st" : "v"}" text-anchor="middle">${esc(t)}</text>`);
      });
    }
    parts.push(`<text x="${cx.toFixed(1)}" y="${py + ph + 14}" class="l" text-anchor="middle">${esc(e)}</text>`);
  });
  return parts.join("\n");
}

const STYLE =
  `<style>.t{font-size:13px;font-weight:600;fill:#111}.a{font-size:10px;fill:#444}.l{font-size:10.5px;fill:#222}` +
  `.na{font-size:10px;fill:#888}.v{font-size:9.5px;fill:#333}.st{font-size:9.5px;fill:#b91c1c;font-style:italic}` +
  `.g{stroke:#e3e3e3;stroke-width:1}.ax{stroke:#888}.h{font-size:15px;font-weight:700;fill:#111}.s{font-size:11px;fill:#555}</style>`;

/** The chart: a legend per runtime, then one panel per scenario and measure (rates, then memory). */
export function svg(report) {
  const rts = runtimesOf(report);
  const panels = [];
  for (const s of RATE_SCENARIOS) {
    panels.push([s, "rate"]);
    if (s === "slow-head") panels.push([s, "final"], [s, "held"]);
  }
  for (const s of MEMORY_SCENARIOS) panels.push([s, "bytes"]);
  const scenarios = panels.filter(([s]) => report.rows.some((r) => r.scenario === s));
  const cols = 2, pw = 570, ph = 260, top = 66;
  const rowsN = Math.ceil(scenarios.length / cols);
  const W = cols * pw + 20, H = top + rowsN * ph + 10;
  const parts = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">`);
  parts.push(STYLE);
  parts.push("<defs>");
  for (const rt of rts) {
    parts.push(`<pattern id="hatch-${rt}" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="#fff"/><line x1="0" y1="0" x2="0" y2="5" stroke="${COLORS[rt]}" stroke-width="2"/></pattern>`);
  }
  parts.push("</defs>");
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  const m = report.machine ?? {};
  parts.push(`<text x="10" y="20" class="h">offset-frontier vs hand-written baselines${report.quick ? " (quick run, reduced sizes)" : ""}</text>`);
  parts.push(`<text x="10" y="37" class="s">${esc(`${m.cpu ?? ""}; ${m.date?.slice(0, 10) ?? ""}. Linear axes from 0; short bars have their values written above them. Hatched = stalled (safe position stuck at a gap).`)}</text>`);
  let lx = 10;
  for (const rt of rts) {
    parts.push(`<rect x="${lx}" y="46" width="12" height="12" fill="${COLORS[rt]}"/>`);
    const label = `${rt} ${report.versions?.[rt]?.split(" ")[0] ?? ""}`;
    parts.push(`<text x="${lx + 16}" y="56" class="l">${esc(label)}</text>`);
    lx += 30 + label.length * 7;
  }
  scenarios.forEach(([sc, metric], i) => {
    const x = 10 + (i % cols) * pw, y = top + Math.floor(i / cols) * ph;
    parts.push(panel(report, sc, x, y, pw - 30, ph, rts, metric));
  });
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}

const SUMMARY_ROWS = ["js", "wasm", "set-watermark", "deque-map"];
const SUMMARY_COLORS = { js: "#0f766e", wasm: "#2563eb", "set-watermark": "#9ca3af", "deque-map": "#6b7280" };

/** One summary panel: per runtime a group of horizontal bars (a bar per row), linear from 0, values at the bar ends. */
function summaryPanel(report, rts, scenario, metric, x0, y0, w, title, subtitle) {
  const n = largest(report, scenario);
  const { value, unit } = METRICS[metric];
  const val = (rt, eng) => {
    const r = find(report, rt, eng, scenario, n);
    return usable(r) || (r && metric !== "rate" && r.bytes_per_pending !== null) ? value(r) : null;
  };
  const parts = [];
  parts.push(`<text x="${x0}" y="${y0 + 14}" class="t">${esc(title)}</text>`);
  parts.push(`<text x="${x0}" y="${y0 + 29}" class="s">${esc(subtitle)}</text>`);
  const lw = 84, vw = 104; // row labels on the left, values on the right
  const bx0 = x0 + lw, bwMax = w - lw - vw;
  const all = rts.flatMap((rt) => SUMMARY_ROWS.map((e) => val(rt, e))).filter((v) => v > 0);
  const max = all.length ? Math.max(...all) : 1;
  let y = y0 + 42;
  const barH = 15, gap = 3;
  for (const rt of rts) {
    parts.push(`<text x="${x0}" y="${y + 11}" class="rt" fill="${COLORS[rt]}">${esc(`${rt} ${report.versions?.[rt]?.split(" ")[0] ?? ""}`)}</text>`);
    y += 16;
    const ref = val(rt, "js");
    for (const e of SUMMARY_ROWS) {
      const v = val(rt, e);
      parts.push(`<text x="${bx0 - 6}" y="${y + 11}" class="l" text-anchor="end">${esc(e)}</text>`);
      if (v === null || v === undefined) {
        parts.push(`<text x="${bx0 + 4}" y="${y + 11}" class="na">not measured</text>`);
      } else {
        const bw = Math.max(1.5, (v / max) * bwMax);
        parts.push(`<rect x="${bx0}" y="${y}" width="${bw.toFixed(1)}" height="${barH}" fill="${SUMMARY_COLORS[e]}"><title>${esc(`${rt} ${e}: ${shownValue(v, unit)}`)}</title></rect>`);
        let text = shownValue(v, unit);
        if (e !== "js" && ref > 0 && v > 0 && (e === "set-watermark" || e === "deque-map")) {
          const k = metric === "rate" ? ref / v : v / ref;
          text += metric === "rate" ? `  (js ${k >= 10 ? k.toFixed(0) : k.toFixed(1)}× faster)` : `  (${k >= 10 ? k.toFixed(0) : k.toFixed(1)}× js)`;
        }
        parts.push(`<text x="${(bx0 + bw + 5).toFixed(1)}" y="${y + 11}" class="v">${esc(text)}</text>`);
      }
      y += barH + gap;
    }
    y += 8;
  }
  return { svg: parts.join("\n"), bottom: y };
}

/**
 * The compact chart for the README (≤ 900 × 500): the tracker (js and wasm engines, one
 * call per record) against the set-watermark and deque-map baselines, per runtime, for
 * the two figures that matter: records per second in random completion order, and bytes
 * per record held behind a slow head; the final advance past them in the footer.
 */
export function summarySvg(report) {
  const rts = runtimesOf(report);
  const W = 900;
  const m = report.machine ?? {};
  const nR = largest(report, "random"), nS = largest(report, "slow-head");
  const left = summaryPanel(report, rts, "random", "rate", 10, 44, 435, `Throughput, ${fmtInt(nR)} records`, "register + complete in random order; records/s, higher is better");
  const right = summaryPanel(report, rts, "slow-head", "held", 460, 44, 430, `Memory, ${fmtInt(nS)} held records`, "completed records held behind one slow head; bytes each, lower is better");
  const range = (eng) => {
    const v = rts.map((rt) => find(report, rt, eng, "slow-head", nS)).filter(usable).map((r) => r.final_advance_ms);
    if (v.length === 0) return "—";
    const lo = Math.min(...v), hi = Math.max(...v);
    return lo === hi ? `${fmtMs(lo)} ms` : `${fmtMs(lo)}–${fmtMs(hi)} ms`;
  };
  const bottom = Math.max(left.bottom, right.bottom) + 6;
  const H = Math.min(500, bottom + 40);
  const parts = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">`);
  parts.push(STYLE.replace("</style>", ".rt{font-size:12px;font-weight:700}</style>"));
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="10" y="20" class="h">offset-frontier: the tracker vs hand-written baselines${report.quick ? " (quick run, reduced sizes)" : ""}</text>`);
  parts.push(`<text x="10" y="36" class="s">${esc(`${m.cpu ?? ""}, ${m.date?.slice(0, 10) ?? ""}; js and wasm engines, one complete() call per record; linear axes from 0. All scenarios: latest.svg`)}</text>`);
  parts.push(left.svg, right.svg);
  parts.push(`<text x="10" y="${bottom + 12}" class="s">${esc(`Once the slow head completes, the final advance past the ${fmtInt(nS)} held records takes js ${range("js")}, wasm ${range("wasm")};`)}</text>`);
  parts.push(`<text x="10" y="${bottom + 27}" class="s">${esc(`set-watermark ${range("set-watermark")}, deque-map ${range("deque-map")} (range over the runtimes). Medians; method and every scenario: bench/README.md.`)}</text>`);
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}

/** The results section of bench/README.md: chart, headline tables (a column per runtime), the checks. */
export function readmeSection(report) {
  const rts = runtimesOf(report);
  const m = report.machine ?? {};
  const out = [];
  const mins = Math.round((report.seconds?.total ?? 0) / 60);
  out.push("## Results");
  out.push("");
  out.push("![tracker vs baselines per runtime: records per second and bytes per held record](results/summary.svg)");
  out.push("");
  out.push("Every scenario, measure and runtime: [`results/latest.svg`](results/latest.svg).");
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
  table("partitions: records/s, 1,000 trackers, completions interleaved", "partitions", rate);
  table("batches: records/s, a consumer with a 64-slot worker pool", "batches", rate);
  table("memory-dense: bytes per pending record", "memory-dense", bytes);
  out.push("**Ratio checks** (one run, each runtime)");
  out.push("");
  for (const c of checks(report)) out.push(`- **${c.status}** ${c.runtime}: ${c.text}`);
  out.push("");
  return out.join("\n");
}

const fmtUs = (us) => (us === null || us === undefined ? "—" : us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : us >= 10 ? `${us.toFixed(0)} µs` : `${us.toFixed(2)} µs`);

/**
 * The codec section (bench/codec.bench.ts, one report per runtime): sizes (the same on every
 * runtime; checked), what each side keeps, then encode/decode time per commit per runtime.
 */
export function codecMarkdown(codec) {
  if (!codec?.length) return "";
  const out = [];
  const first = codec[0];
  const int = (n) => n.toLocaleString("en-US");
  out.push("## Completed-set codec vs Parallel Consumer 0.5.3.3 (commit metadata)");
  out.push("");
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
  for (const [k, s] of Object.entries(first.seeds ?? {})) out.push(`Random ${k}: ours ≤ PC on ${s.oursNotLarger} of ${s.seeds} seeds (worst case ours − PC = ${s.worst} chars).`);
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
