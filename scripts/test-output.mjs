// What a test runner's output says: passing and failing counts, and which tests failed and
// why, read from node:test (TAP), `bun test` and `deno test` output alike. The test command
// prints the failed tests last, so that a log's tail names them.

const ANSI = new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g");
/** The text without ANSI colours (deno, bun and node print them). */
export const plain = (text) => text.replace(ANSI, "");

/** Passing and failing counts; `found` is false when no runner's totals are in the text. */
export function counts(text) {
  const t = plain(text);
  let pass = 0, fail = 0, found = false;
  for (const m of t.matchAll(/^# pass (\d+)\s*$/gm)) (pass += +m[1]), (found = true);
  for (const m of t.matchAll(/^# fail (\d+)\s*$/gm)) fail += +m[1];
  for (const m of t.matchAll(/^\s*(\d+) pass\s*$/gm)) (pass += +m[1]), (found = true);
  for (const m of t.matchAll(/^\s*(\d+) fail\s*$/gm)) fail += +m[1];
  for (const m of t.matchAll(/^(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/gm)) {
    pass += Math.max(+m[1], +(m[2] ?? 0)); // deno counts describe blocks as tests, their tests as steps
    fail += +m[3];
    found = true;
  }
  return { pass, fail, found };
}

/** "test/kafka/a.test.ts:12:3" → "a.test.ts". */
const fileOf = (location) => location.split("/").pop().replace(/(:\d+)+$/, "");

/**
 * The failed tests, each as "name — first line of its error" (or the name alone), in the
 * order printed. A node:test suite that failed only because a test in it failed is left out
 * (the test is named); so is a name twice.
 */
export function failedTests(text) {
  const lines = plain(text).split("\n");
  const found = [];
  const add = (name, why) => {
    const line = why ? `${name.trim()} — ${why.trim().slice(0, 240)}` : name.trim();
    if (!found.includes(line)) found.push(line);
  };
  // bun: "(fail) suite > test [1.2ms]", its error printed above it ("error: message" for an
  // Error, "AssertionError: message" for a named one), after the previous test's line
  let firstError, file;
  for (const line of lines) {
    const header = /^(\S+\.test\.[cm]?[jt]sx?):$/.exec(line);
    if (header) file = header[1].split("/").pop();
    if (/^\((pass|skip|todo)\) /.test(line)) firstError = undefined;
    const err = /^(?:error: (.+)|([A-Z]\w*(?:Error|Exception)\b.*))$/.exec(line);
    if (err && firstError === undefined) firstError = err[1] ?? err[2];
    const bun = /^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/.exec(line);
    if (bun) {
      add(file ? `${bun[1]} (${file})` : bun[1], firstError);
      firstError = undefined;
    }
  }
  // node:test TAP: "not ok 3 - name", then a YAML block whose "error:" says why
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)not ok \d+ - (.+?)(?: # .*)?$/.exec(lines[i]);
    if (!m) continue;
    let why, location;
    for (let j = i + 1; j < lines.length && j < i + 60; j++) {
      const l = lines[j];
      if (l.trim() === "...") break;
      const loc = /^\s+location: '(.+)'$/.exec(l);
      if (loc) location = fileOf(loc[1]);
      const e = /^\s+error: (.*)$/.exec(l);
      if (e && why === undefined) why = /^[|>]-?$/.test(e[1].trim()) ? (lines[j + 1] ?? "").trim() : e[1].replace(/^'(.*)'$/, "$1");
    }
    if (why !== undefined && /^\d+ subtests? failed$/.test(why)) continue;
    add(location ? `${m[2]} (${location})` : m[2], why);
  }
  // deno: an ERRORS section of "name => location" headers, each followed by "error: ..."
  const errorsAt = lines.findIndex((l) => l.trim() === "ERRORS");
  if (errorsAt >= 0) {
    const end = lines.findIndex((l, i) => i > errorsAt && l.trim() === "FAILURES");
    let name;
    for (const line of lines.slice(errorsAt + 1, end < 0 ? undefined : end)) {
      const head = /^(\S.*?) => (\S+)$/.exec(line);
      if (head) {
        if (name) add(name);
        name = head[2].startsWith("ext:") ? head[1] : `${head[1]} (${fileOf(head[2])})`;
        continue;
      }
      const err = /^error: (.+)$/.exec(line);
      if (err && name) {
        add(name, err[1]);
        name = undefined;
      }
    }
    if (name) add(name);
  }
  return found;
}
