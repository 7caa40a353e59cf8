/**
 * The documentation holds together: every page of docs/ is linked from README.md, every
 * relative link of README.md, docs/*.md, CONTRIBUTING.md and the other READMEs (and of the
 * playground page, which is served with README.md and docs/ beside it) names a file that
 * exists and, for `#anchor`, a heading of that file (GitHub's slugs), and every `ts`/`js`
 * code block of the README and docs/ carries the marker by which test/pack runs it (or
 * says it is illustrative). A broken link or an unmarked block fails here, on every runtime.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The markdown files whose links are checked (paths relative to the repository). */
function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  const others = ["README.md", "CONTRIBUTING.md", "bench/README.md", "demo/README.md", "test/chaos/README.md"];
  return [...others.filter((f) => existsSync(join(ROOT, f))), ...docs.sort()];
}

/** The text without fenced code blocks and inline code spans (links there are not links). */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: rendered text, lower case, punctuation dropped, spaces to '-'. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link renders as its text
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a markdown file offers: its headings (duplicates get -1, -2, …) and explicit ids. */
export function anchors(md: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  const noCode = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "");
  for (const m of noCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const s = slug(m[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    out.add(n === 0 ? s : `${s}-${n}`);
  }
  for (const m of noCode.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  return out;
}

/** The relative link targets of a markdown text (external and mail links left out). */
export function markdownLinks(md: string): string[] {
  const out: string[] = [];
  for (const m of prose(md).matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) out.push(m[1]);
  }
  return out;
}

/**
 * Every broken link among `files` (repository-relative path → text): the target file must
 * exist (read through `read`, relative to the linking file unless `base` maps it elsewhere)
 * and an `#anchor` must name a heading of a markdown target. Returns one line per problem.
 */
export function brokenLinks(
  files: Map<string, string>,
  exists: (path: string) => boolean,
  read: (path: string) => string,
  base: (file: string) => string = dirname,
): string[] {
  const problems: string[] = [];
  for (const [file, text] of files) {
    const links = file.endsWith(".html")
      ? [...text.matchAll(/\bhref="([^"#]+\.md(?:#[^"]*)?)"/g)].map((m) => m[1]) // its links to the docs (its assets are built)
      : markdownLinks(text);
    for (const link of links) {
      const [pathPart, anchor] = link.split("#", 2) as [string, string | undefined];
      const target = pathPart === "" ? file : normalize(join(base(file), decodeURIComponent(pathPart)));
      if (target.startsWith("..")) {
        problems.push(`${file}: ${link} leaves the repository`);
        continue;
      }
      if (!exists(target)) {
        problems.push(`${file}: ${link} → ${target} does not exist`);
        continue;
      }
      if (anchor !== undefined && target.endsWith(".md") && !anchors(read(target)).has(anchor)) {
        problems.push(`${file}: ${link} → no heading #${anchor} in ${target}`);
      }
    }
  }
  return problems;
}

const repoExists = (p: string): boolean => existsSync(join(ROOT, p));
const repoRead = (p: string): string => readFileSync(join(ROOT, p), "utf8");
/** The playground page is served from a folder holding README.md and docs/ as the repository does. */
const repoBase = (file: string): string => (file === "playground/index.html" ? "." : dirname(file));

describe("the documentation's links", () => {
  test("every page of docs/ is linked from README.md", () => {
    const readme = repoRead("README.md");
    const linked = new Set(markdownLinks(readme).map((l) => normalize(l.split("#")[0])));
    const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
    assert.ok(pages.length >= 10, `docs/ holds the reference pages: ${pages.join(", ")}`);
    assert.deepEqual(pages.filter((p) => !linked.has(p)), [], "pages of docs/ that README.md does not link");
  });

  test("every relative link of the READMEs, docs/ and the playground page resolves, anchors included", () => {
    const files = new Map(markdownFiles().map((f) => [f, repoRead(f)]));
    files.set("playground/index.html", repoRead("playground/index.html"));
    const problems = brokenLinks(files, repoExists, repoRead, repoBase);
    assert.deepEqual(problems, [], `broken links:\n${problems.join("\n")}`);
  });

  test("a broken file, a broken anchor and a link leaving the repository are each reported", () => {
    const pages = new Map([
      ["README.md", "# Top\n## Guarantees\n[ok](docs/a.md#the-gap) [bad file](docs/b.md) [bad anchor](docs/a.md#nope) [self](#guarantees)\n"],
      ["docs/a.md", "# The gap\n[up](../README.md#top) [out](../../x.md) `[code](not/a/link.md)`\n```\n[in a block](nor/this.md)\n```\n"],
    ]);
    const problems = brokenLinks(pages, (p) => pages.has(p), (p) => pages.get(p) ?? "");
    assert.deepEqual(problems, [
      "README.md: docs/b.md → docs/b.md does not exist",
      "README.md: docs/a.md#nope → no heading #nope in docs/a.md",
      "docs/a.md: ../../x.md leaves the repository",
    ]);
  });

  test("GitHub's heading anchors", () => {
    assert.equal(slug("Exactly once: consume → process → produce"), "exactly-once-consume--process--produce");
    assert.equal(slug("The runner against bare KafkaJS (`npm run bench:consumer`)"), "the-runner-against-bare-kafkajs-npm-run-benchconsumer");
    assert.equal(slug("`@platformatic/kafka` (Node ≥ 22.22, Bun, Deno) — first slice"), "platformatickafka-node--2222-bun-deno--first-slice");
    assert.deepEqual([...anchors("# A\n## A\n```\n# not a heading\n```\n")], ["a", "a-1"]);
  });

  test("every ts/js block of README.md and docs/ carries the marker test/pack runs it by", () => {
    const unmarked: string[] = [];
    const files = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
    for (const file of files) {
      const lines = repoRead(file).split("\n");
      let inFence = false;
      lines.forEach((line, i) => {
        if (/^(```|~~~)/.test(line)) {
          if (!inFence && /^```(ts|js|typescript|javascript|mjs)\s*$/.test(line)) {
            const marker = file === "README.md" ? /^<!-- quickstart:(node|bun|deno|kafkajs) / : /^<!-- example:[\w-]+ (run|exit|illustrative)\b/;
            if (!marker.test(lines[i - 1] ?? "")) unmarked.push(`${file}:${i + 1}`);
          }
          inFence = !inFence;
        }
      });
    }
    assert.deepEqual(unmarked, [], "code blocks without a quickstart/example marker on the line before");
  });

  test("the docs folder holds only pages and the playground's screenshots", () => {
    for (const f of readdirSync(join(ROOT, "docs"))) {
      const p = join(ROOT, "docs", f);
      assert.ok(f.endsWith(".md") || (f === "playground" && statSync(p).isDirectory()), `unexpected ${relative(ROOT, p)}`);
    }
  });
});
