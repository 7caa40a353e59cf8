// The two SVG charts of a bench run (hand-written): the full chart (grouped bars on linear
// axes, one panel per scenario and measure, a colour per runtime, the value written over
// bars too short to read) and the compact summary for the README (tracker vs baselines
// per runtime, horizontal bars).

import {
  COLORS,
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
  usable,
} from "./report_data.mjs";

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
