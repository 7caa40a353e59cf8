/**
 * The layout CONTRIBUTING.md draws, checked on the sources: arrows point down only
 * (adapters → core/consumer → core/tracker), `core/` imports no `node:` module and no
 * adapter, and inside `core/consumer/` the rooms point down only (the runner's files →
 * records → commits → dispatch → port). A file reaches another room only through that
 * room's `mod.ts`, its outside. Read as text: the same check on Node, Bun and Deno.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The rooms of core/consumer, top to bottom: each may import only those after it. */
const ROOMS = ["records", "commits", "dispatch", "port"] as const;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every module specifier `file` imports or re-exports, static or dynamic. */
function specifiers(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
}

/** The room of a core/consumer path: a room's name, or "runner" for the files beside the rooms. */
function roomOf(path: string): string | undefined {
  const rel = relative("core/consumer", path);
  if (rel.startsWith("..")) return undefined;
  const first = rel.split(/[\\/]/)[0];
  return (ROOMS as readonly string[]).includes(first) ? first : "runner";
}

const rank = (room: string): number => (room === "runner" ? -1 : ROOMS.indexOf(room as typeof ROOMS[number]));

test("core imports no adapter and no node: module; the tracker does not import the consumer", () => {
  const wrong: string[] = [];
  for (const file of sources("core")) {
    for (const spec of specifiers(file)) {
      const target = spec.startsWith(".") ? normalize(join(dirname(file), spec)) : spec;
      if (spec.startsWith("node:")) wrong.push(`${file} imports ${spec}`);
      if (target.startsWith("adapters")) wrong.push(`${file} imports ${spec}`);
      if (file.startsWith(join("core", "tracker")) && target.startsWith(join("core", "consumer"))) wrong.push(`${file} imports ${spec}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("core/consumer's rooms point down only, and reach another room through its mod.ts", () => {
  const wrong: string[] = [];
  const files = sources(join("core", "consumer"));
  assert.ok(files.length > 30, `core/consumer holds the runner's files (${files.length})`);
  const beside = files.filter((f) => roomOf(f) === "runner");
  assert.ok(beside.length <= 6, `a handful of files beside the rooms: ${beside.join(", ")}`);
  for (const room of ROOMS) assert.ok(files.includes(join("core", "consumer", room, "mod.ts")), `${room}/ has its mod.ts`);
  for (const file of files) {
    const from = roomOf(file)!;
    for (const spec of specifiers(file)) {
      if (!spec.startsWith(".")) continue;
      const target = normalize(join(dirname(file), spec));
      const to = roomOf(target);
      if (to === undefined || to === from) continue;
      if (rank(to) <= rank(from)) wrong.push(`${file} (${from}) imports ${spec} (${to}): arrows point down only`);
      else if (to !== "runner" && !target.endsWith(join(to, "mod.ts"))) wrong.push(`${file} imports ${spec}: another room only through its mod.ts`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("adapters reach core/consumer's rooms through their mod.ts", () => {
  const wrong: string[] = [];
  for (const file of sources("adapters")) {
    for (const spec of specifiers(file)) {
      if (!spec.startsWith(".")) continue;
      const target = normalize(join(dirname(file), spec));
      const to = roomOf(target);
      if (to !== undefined && to !== "runner" && !target.endsWith(join(to, "mod.ts"))) wrong.push(`${file} imports ${spec}`);
    }
  }
  assert.deepEqual(wrong, []);
});
