/**
 * The demo's output: a text table per strategy and a hand-written SVG bar chart.
 *
 * Also a command: `node --import tsx demo/report.ts demo/results/runs-20.json` prints
 * the table of a saved result and writes its chart next to it (same name, `.svg`).
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { parseCli, usageError } from "../scripts/cli.mjs";

/** What one crash-and-recover trial measured. */
export interface Trial {
  /** `naive` or `frontier`. */
  strategy: Strategy;
  /** 1-based run number. */
  run: number;
  /** Records produced (offsets 0 … records − 1). */
  records: number;
  /** Records the first process finished (logged) before the SIGKILL. */
  finishedBeforeCrash: number;
  /** Highest offset the first process finished (−1: none). */
  highestFinished: number;
  /** The group's committed offset read from the broker right after the kill (null: none). */
  committedAtCrash: number | null;
  /** Where the replacement resumed: the committed offset once the crashed process's last commit could have landed. */
  resumedAt: number | null;
  /** Records the replacement finished. */
  finishedByReplacement: number;
  /** Produced offsets finished by neither process. */
  lost: number;
  /** Offsets finished more than once. */
  duplicates: number;
  /** Milliseconds from the kill until every record was accounted for (the replacement's group join dominates). */
  recoveryMs: number;
  /** Frontier only: the runner's last view before the crash (from its state file). */
  runner?: {
    /** Handler calls running (a record logged but not yet reported counts here). */
    running: number;
    /** The safe position. */
    safe: number | null;
    /** The last acknowledged commit (null: none yet). */
    confirmed: number | null;
    /** Completed records behind an unfinished earlier one. */
    blocked: number;
    /** Completed records not covered by the confirmed commit: (safe − confirmed) + blocked. */
    finishedAfterConfirmed: number;
    /** running + finishedAfterConfirmed: what a crash may redo, at most. */
    bound: number;
  };
  /** The replacement did not account for every record before the timeout. */
  timedOut: boolean;
}

/** The two strategies compared. */
export type Strategy = "naive" | "frontier";

/** Every trial of a demo run, by strategy, and the settings. */
export interface DemoResult {
  /** How many runs. */
  runs: number;
  /** Settings of the runs. */
  settings: {
    records: number;
    killAfterMs: number;
    workers: number;
    workMs: number;
    commitMs: number;
  };
  /** Per strategy: one entry per run. */
  naive: StrategyResult;
  /** Per strategy: one entry per run. */
  frontier: StrategyResult;
}

/** The figures of one strategy over all runs. */
export interface StrategyResult {
  /** Records lost, per run. */
  lost: number[];
  /** Records processed twice, per run. */
  duplicates: number[];
  /** Committed offset at the crash, per run. */
  committedAtCrash: (number | null)[];
  /** Highest finished record at the crash, per run. */
  highestFinished: number[];
  /** min / median / max of lost and duplicates. */
  summary: { lost: Spread; duplicates: Spread };
  /** The trials themselves. */
  trials: Trial[];
}

/** Smallest, median and largest value. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** min / median / max (median of an even count: the mean of the middle two). */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: 0, median: 0, max: 0 };
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { min: s[0], median, max: s[s.length - 1] };
}

/** Collects the trials of one strategy into its figures. */
export function strategyResult(trials: readonly Trial[]): StrategyResult {
  const lost = trials.map((t) => t.lost);
  const duplicates = trials.map((t) => t.duplicates);
  return {
    lost,
    duplicates,
    committedAtCrash: trials.map((t) => t.committedAtCrash),
    highestFinished: trials.map((t) => t.highestFinished),
    summary: { lost: spread(lost), duplicates: spread(duplicates) },
    trials: [...trials],
  };
}

/** What each strategy is, in one line. */
export const DESCRIPTION: Record<Strategy, string> = {
  naive: "KafkaJS auto-commit every 100 ms, eachMessage enqueues to an in-memory queue",
  frontier: "offset-frontier ParallelConsumer (KafkaJS binding), commits safe positions",
};

const fmt = (v: number | null): string => (v === null ? "-" : String(v));
const fmtSpread = (s: Spread): string => `${s.min} / ${s.median} / ${s.max}`;

/** The text tables: one per strategy, a row per run, then min / median / max. */
export function table(result: DemoResult): string {
  const s = result.settings;
  const out: string[] = [
    `${s.records} records, ${s.workers} workers × ${s.workMs} ms per record, SIGKILL ${s.killAfterMs} ms after the ` +
    `first record arrived, replacement in the same group; ${result.runs} run(s)`,
  ];
  for (const strategy of ["naive", "frontier"] as const) {
    const r = result[strategy];
    if (r.trials.length === 0) continue;
    const frontier = strategy === "frontier";
    const head = ["run", "finished", "highest", "committed", "lost", "processed"];
    const head2 = ["", "by crash", "finished", "at crash", "", "twice"];
    if (frontier) head.push("bound"), head2.push("(runner)");
    const rows = r.trials.map((t) => {
      const row = [
        String(t.run),
        String(t.finishedBeforeCrash),
        fmt(t.highestFinished < 0 ? null : t.highestFinished),
        fmt(t.committedAtCrash),
        String(t.lost) + (t.timedOut ? "*" : ""),
        String(t.duplicates),
      ];
      if (frontier) row.push(t.runner ? String(t.runner.bound) : "-");
      return row;
    });
    const widths = head.map((h, i) => Math.max(h.length, head2[i].length, ...rows.map((row) => row[i].length)));
    const line = (cells: string[]): string => "  " + cells.map((c, i) => c.padStart(widths[i])).join("  ");
    out.push("", `${strategy}: ${DESCRIPTION[strategy]}`, line(head), line(head2), ...rows.map(line));
    out.push(
      `  lost: ${fmtSpread(r.summary.lost)}    processed twice: ${fmtSpread(r.summary.duplicates)}   (min / median / max)`,
    );
    if (r.trials.some((t) => t.timedOut)) out.push("  * the replacement timed out before every record was accounted for");
  }
  out.push(
    "",
    "lost = produced offsets finished by neither process; processed twice = offsets finished by both.",
    "committed at crash is the group's offset read from the broker right after the kill; highest finished is",
    "the last record the killed process finished. Committing past it is what loses records.",
  );
  return out.join("\n");
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * A grouped bar chart (median, with min–max whiskers) of lost and twice-processed records.
 * Hand-written SVG. One run: its values, no whiskers, and the caption says so.
 */
export function svg(result: DemoResult): string {
  const W = 640, H = 380;
  const left = 56, right = 24, top = 70, bottom = 70;
  const plotH = H - top - bottom;
  const plotW = W - left - right;
  const series = [
    { key: "lost" as const, label: "lost", color: "#d1495b" },
    { key: "duplicates" as const, label: "processed twice", color: "#edae49" },
  ];
  const strategies = ["naive", "frontier"] as const;
  const peak = Math.max(1, ...strategies.flatMap((s) => series.map((x) => result[s].summary[x.key].max)));
  const step = niceStep(peak / 5);
  const yMax = Math.ceil(peak / step) * step;
  const y = (v: number): number => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [];
  const s = result.settings;
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600">` +
      `Records lost and processed twice after a SIGKILL</text>`,
    `<text x="${W / 2}" y="44" text-anchor="middle" fill="#555">` +
      esc(`${s.records} records, ${s.workers} workers × ${s.workMs} ms, kill after ${s.killAfterMs} ms, ` +
        `real broker; ${result.runs === 1 ? "one run" : `median of ${result.runs} runs, whiskers min–max`}`) +
      `</text>`,
  );
  for (let v = 0; v <= yMax; v += step) {
    parts.push(
      `<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v}</text>`,
    );
  }
  parts.push(
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#555">records</text>`,
  );
  const groupW = plotW / strategies.length;
  const barW = Math.min(72, groupW / 4);
  strategies.forEach((strategy, g) => {
    const cx = left + groupW * (g + 0.5);
    series.forEach((x, i) => {
      const sp = result[strategy].summary[x.key];
      const bx = cx + (i - series.length / 2) * (barW + 8) + 4;
      const mid = bx + barW / 2;
      parts.push(
        `<rect x="${bx}" y="${y(sp.median)}" width="${barW}" height="${y(0) - y(sp.median)}" fill="${x.color}"/>`,
      );
      if (sp.max > sp.min) {
        parts.push(
          `<line x1="${mid}" x2="${mid}" y1="${y(sp.min)}" y2="${y(sp.max)}" stroke="#333"/>`,
          `<line x1="${mid - 6}" x2="${mid + 6}" y1="${y(sp.max)}" y2="${y(sp.max)}" stroke="#333"/>`,
          `<line x1="${mid - 6}" x2="${mid + 6}" y1="${y(sp.min)}" y2="${y(sp.min)}" stroke="#333"/>`,
        );
      }
      const labelY = Math.min(y(sp.max), y(sp.median)) - 6;
      parts.push(`<text x="${mid}" y="${labelY}" text-anchor="middle" font-weight="600">${sp.median}</text>`);
    });
    parts.push(
      `<text x="${cx}" y="${y(0) + 20}" text-anchor="middle" font-weight="600">${strategy}</text>`,
      `<text x="${cx}" y="${y(0) + 36}" text-anchor="middle" fill="#555" font-size="11">` +
        `${strategy === "naive" ? "auto-commit + work queue" : "commits the completed prefix"}</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`);
  series.forEach((x, i) => {
    const lx = left + 8 + i * 150;
    parts.push(
      `<rect x="${lx}" y="${H - 22}" width="12" height="12" fill="${x.color}"/>`,
      `<text x="${lx + 18}" y="${H - 12}">${x.label}</text>`,
    );
  });
  parts.push(`</svg>`, "");
  return parts.join("\n");
}

/** 1, 2 or 5 × 10^k, at least `raw`. */
function niceStep(raw: number): number {
  if (raw <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { positionals } = parseCli({
    name: "demo/report",
    usage: "usage: node --import tsx demo/report.ts RESULT.json\n\n" +
      "Prints the tables of a demo result and writes the chart beside it (RESULT.svg).",
    positionals: true,
  });
  if (positionals.length !== 1) usageError("demo/report", "give exactly one RESULT.json");
  const file = positionals[0];
  if (!file.endsWith(".json")) usageError("demo/report", `RESULT must be a .json file; got ${JSON.stringify(file)}`);
  const result = JSON.parse(readFileSync(file, "utf8")) as DemoResult;
  writeFileSync(file.replace(/\.json$/, "") + ".svg", svg(result));
  console.log(table(result));
}
