/**
 * Every command in bench/README.md runs as written: each command line of its code blocks
 * names an npm script that package.json has (with its flags after `--`, where npm passes
 * them on instead of taking them as its own), a file that exists (a .ts file on Node
 * through `--import tsx`), and only arguments that the script's own command-line parser
 * accepts. The parser's option table is read from the script's source with the TypeScript
 * compiler and the arguments go through node:util `parseArgs` as the script hands them
 * (strict, positionals only where it allows them; `--help` where `parseCli` answers it):
 * nothing is run and nothing is timed. The same check on Node, Bun and Deno.
 *
 * Not checked: the values of flags (`--rounds abc`, `--runtime java`), which the scripts
 * check after parsing (test/unit/cli.test.ts runs them on bad values).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import ts from "typescript";
import { readArgs as readPcArgs } from "../../bench/pc/args.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The command lines of the code blocks of `md` (indented by four spaces or more, or fenced as shell), with their line numbers. */
export function commandLines(md: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const lines = md.split("\n");
  let fence: "shell" | "other" | undefined;
  let inBlock = false; // the line before was a code line or a blank line after one
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const opening = /^\s*(```|~~~)\s*(\S*)/.exec(l);
    if (opening) {
      fence = fence ? undefined : /^(|sh|bash|shell|console)$/.test(opening[2]) ? "shell" : "other";
      continue;
    }
    if (fence) {
      if (fence === "shell" && l.trim() !== "") out.push({ line: i + 1, text: l.trim() });
      continue;
    }
    const blankBefore = i === 0 || lines[i - 1].trim() === "";
    if (/^ {4,}\S/.test(l) && (inBlock || blankBefore)) {
      inBlock = true;
      out.push({ line: i + 1, text: l.trim() });
    } else if (l.trim() !== "") inBlock = false;
  }
  return out;
}

/** A shell line's words: quotes group and are removed, `#` starts a comment; operators (`|`, `&&`, `;`, `>`) are refused. */
export function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= "";
    } else if (/\s/.test(ch)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (ch === "#" && word === undefined) {
      break;
    } else {
      word = (word ?? "") + ch;
    }
  }
  if (quote) throw new Error(`an unclosed quote in ${JSON.stringify(line)}`);
  if (word !== undefined) out.push(word);
  const operator = out.find((w) => /^(\||&&|\|\||;|>|>>|<|&)$/.test(w));
  if (operator) throw new Error(`${JSON.stringify(line)} uses the shell operator ${operator}: this test checks single commands`);
  return out;
}

/** How a script reads its arguments: a message saying what is wrong with `args`, or `undefined` when it takes them. */
type ArgsCheck = (args: string[]) => string | undefined;

/** A property name of an object literal: an identifier or a string. */
function nameOf(name: ts.PropertyName, file: string): string {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  throw new Error(`${file}: an option table with a computed name; this test reads literal tables only`);
}

/** A literal value of an option's description: a string, `true` or `false`. */
function literal(value: ts.Expression, file: string): string | boolean {
  if (ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) return value.text;
  if (value.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (value.kind === ts.SyntaxKind.FalseKeyword) return false;
  throw new Error(`${file}: an option described by ${value.getText()}; this test reads literal tables only`);
}

/** The option table an object literal declares, as node:util `parseArgs` takes it. */
function optionTable(node: ts.Expression | undefined, file: string): NonNullable<ParseArgsConfig["options"]> {
  if (node === undefined) return {};
  if (!ts.isObjectLiteralExpression(node)) throw new Error(`${file}: the option table ${node.getText()} is not an object literal`);
  const table: NonNullable<ParseArgsConfig["options"]> = {};
  for (const option of node.properties) {
    if (!ts.isPropertyAssignment(option) || !ts.isObjectLiteralExpression(option.initializer)) {
      throw new Error(`${file}: the option ${option.getText()} is not \`name: { type: … }\``);
    }
    const described: Record<string, string | boolean> = {};
    for (const field of option.initializer.properties) {
      if (!ts.isPropertyAssignment(field)) throw new Error(`${file}: ${field.getText()} is not \`field: value\``);
      described[nameOf(field.name, file)] = literal(field.initializer, file);
    }
    if (described.type !== "string" && described.type !== "boolean") throw new Error(`${file}: ${option.getText()} has no type`);
    table[nameOf(option.name, file)] = described as { type: "string" | "boolean" };
  }
  return table;
}

/** The property `name` of an object literal. */
function property(node: ts.ObjectLiteralExpression, name: string, file: string): ts.Expression | undefined {
  const found = node.properties.find((p) => p.name !== undefined && nameOf(p.name, file) === name);
  if (found === undefined) return undefined;
  if (!ts.isPropertyAssignment(found)) throw new Error(`${file}: ${found.getText()} is not \`${name}: value\``);
  return found.initializer;
}

/** The string array `const NAME = [ … ]` of a source file, if it has one. */
function stringArray(source: ts.SourceFile, name: string, file: string): string[] | undefined {
  let found: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
      if (!ts.isArrayLiteralExpression(node.initializer)) throw new Error(`${file}: ${name} is not an array literal`);
      found = node.initializer.elements.map((e) => String(literal(e, file)));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * How the script `file` reads its arguments, from its source: the option table it hands to
 * `cli()` (bench/cli.ts), to `parseCli()` (scripts/cli.mjs) or to node:util `parseArgs()`;
 * bench:pc's own parser (bench/pc/args.ts); or, for a script without one that reads
 * `process.argv[2]` as a comma-separated list of its `PASSES`, that list.
 */
export function argsCheckOf(file: string): ArgsCheck {
  if (file === "bench/pc/run.ts") {
    return (args) => {
      const read = readPcArgs(args);
      return "error" in read ? read.error : undefined;
    };
  }
  const text = readFileSync(join(ROOT, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const parsers: Array<{ options: NonNullable<ParseArgsConfig["options"]>; positionals: boolean; help: boolean }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const callee = node.expression.text;
      const [first] = node.arguments;
      if (callee === "cli" && node.arguments.length === 3) {
        parsers.push({ options: optionTable(node.arguments[2], file), positionals: false, help: true });
      } else if ((callee === "parseCli" || callee === "parseArgs") && first !== undefined && ts.isObjectLiteralExpression(first)) {
        const positionals = property(first, callee === "parseCli" ? "positionals" : "allowPositionals", file);
        const strict = property(first, "strict", file);
        if (strict !== undefined && literal(strict, file) !== true) throw new Error(`${file}: a parser that is not strict takes anything`);
        parsers.push({
          options: optionTable(property(first, "options", file), file),
          positionals: positionals !== undefined && literal(positionals, file) === true,
          help: callee === "parseCli", // parseCli answers --help and -h before parsing; parseArgs does not
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (parsers.length > 1) throw new Error(`${file}: ${parsers.length} option tables; this test reads one`);
  const [parser] = parsers;
  if (parser !== undefined) {
    return (args) => {
      const end = args.indexOf("--");
      const own = end >= 0 ? args.slice(0, end) : args;
      if (parser.help && (own.includes("--help") || own.includes("-h"))) return undefined;
      try {
        parseArgs({ args, options: parser.options, strict: true, allowPositionals: parser.positionals });
        return undefined;
      } catch (error) {
        return (error instanceof Error ? error.message : String(error)).split("\n")[0];
      }
    };
  }
  const passes = stringArray(source, "PASSES", file);
  if (passes !== undefined && text.includes("process.argv[2]")) {
    return (args) => {
      if (args.length > 1) return `takes one argument (a comma-separated list of ${passes.join(", ")}); got ${args.length}`;
      const bad = args.length === 0 ? undefined : args[0].split(",").find((p) => !passes.includes(p));
      return bad === undefined ? undefined : `${JSON.stringify(bad)} is not one of ${passes.join(", ")}`;
    };
  }
  throw new Error(`${file}: this test cannot tell which arguments it takes (no option table, no PASSES)`);
}

/** Node's own options that the README's commands use, and whether each takes a value. */
const NODE_OPTIONS: Record<string, boolean> = { "--import": true, "--require": true, "-r": true, "--expose-gc": false };

/** What is wrong with running `argv` from the repository's root (empty: nothing). */
export function problems(argv: readonly string[]): string[] {
  let i = 0;
  while (i < argv.length && /^[A-Z_][A-Z0-9_]*=/.test(argv[i])) i++; // NAME=value before the command
  const [exe, ...args] = argv.slice(i);
  if (exe === undefined) return ["no command"];
  if (exe === "npm") return npm(args);
  const base = exe.split("/").pop()!;
  const wrong: string[] = [];
  if (exe.startsWith("node_modules/.bin/")) {
    if (!(base in PACKAGE.devDependencies)) wrong.push(`${exe}: ${base} is not a devDependency in package.json`);
  } else if (exe.startsWith(".cache/node-")) {
    // The pinned Node 22 and 24, installed by scripts/install-node.mjs (git-ignored).
    if (!existsSync(join(ROOT, "scripts", "install-node.mjs"))) wrong.push(`${exe}: scripts/install-node.mjs is missing`);
  } else if (exe !== base) {
    wrong.push(`${exe}: not a command this test knows (npm, node, bun, deno)`);
  }
  if (base === "node") return [...wrong, ...node(args)];
  if (base === "bun") return [...wrong, ...bun(args)];
  if (base === "deno") return [...wrong, ...deno(args)];
  return [...wrong, `${exe}: not a command this test knows (npm, node, bun, deno)`];
}

function npm(args: string[]): string[] {
  if (args[0] !== "run") return [`npm ${args.join(" ")}: this test checks npm run only`];
  const [, name, ...rest] = args;
  const body = name === undefined ? undefined : PACKAGE.scripts[name];
  if (body === undefined) return [`npm run ${name}: package.json has no such script`];
  if (rest.length > 0 && rest[0] !== "--") {
    return [`npm run ${name} ${rest.join(" ")}: npm takes what comes before "--" as its own options; write npm run ${name} -- ${rest.join(" ")}`];
  }
  return problems([...words(body), ...rest.slice(1)]);
}

function node(args: string[]): string[] {
  const imports: string[] = [];
  let i = 0;
  for (; i < args.length && args[i].startsWith("-"); i++) {
    const takesValue = NODE_OPTIONS[args[i]];
    if (takesValue === undefined) return [`node ${args[i]}: a Node option this test does not know`];
    if (takesValue) imports.push(args[++i]);
  }
  const file = args[i];
  if (file === undefined) return ["node: no script"];
  if (/\.[mc]?ts$/.test(file) && !imports.includes("tsx")) return [`node ${file}: Node runs a .ts file only with --import tsx`];
  return script(file, args.slice(i + 1));
}

function bun(args: string[]): string[] {
  const rest = args[0] === "run" ? args.slice(1) : args;
  if (rest[0] === undefined || rest[0].startsWith("-")) return [`bun ${args.join(" ")}: no script first (a Bun option this test does not know?)`];
  return script(rest[0], rest.slice(1));
}

function deno(args: string[]): string[] {
  if (args[0] !== "run") return [`deno ${args.join(" ")}: this test checks deno run only`];
  let i = 1;
  for (; i < args.length && args[i].startsWith("-"); i++) {
    if (!/^(-A|--allow-all|--allow-[a-z-]+(=\S*)?|--v8-flags=\S+)$/.test(args[i])) return [`deno run ${args[i]}: a Deno option this test does not know`];
  }
  const file = args[i];
  if (file === undefined) return ["deno run: no script"];
  return script(file, args.slice(i + 1));
}

function script(file: string, args: string[]): string[] {
  const path = normalize(file).replaceAll("\\", "/");
  if (!existsSync(join(ROOT, path))) return [`${file}: no such file`];
  if (path === "scripts/with-broker.mjs") {
    // Its own options before "--", then the command it runs against the broker.
    const end = args.indexOf("--");
    if (end < 0) return [`${file} ${args.join(" ")}: no command after --`];
    const wrong = argsCheckOf(path)(args.slice(0, end));
    return [...(wrong === undefined ? [] : [`${file}: ${wrong}`]), ...problems(args.slice(end + 1))];
  }
  const wrong = argsCheckOf(path)(args);
  return wrong === undefined ? [] : [`${file} ${args.join(" ")}: ${wrong}`];
}

test("every command in bench/README.md's code blocks runs as written", () => {
  const lines = commandLines(readFileSync(join(ROOT, "bench", "README.md"), "utf8"));
  assert.ok(lines.length >= 30, `bench/README.md's code blocks hold its commands (found ${lines.length})`);
  const wrong: string[] = [];
  for (const { line, text } of lines) {
    try {
      for (const p of problems(words(text))) wrong.push(`bench/README.md:${line}: ${p}`);
    } catch (error) {
      wrong.push(`bench/README.md:${line}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("the check refuses a flag, a file, a script or a form that would not run", () => {
  const check = (line: string): string[] => problems(words(line));
  assert.deepEqual(check("npm run bench -- --quick --runtimes node"), []);
  assert.deepEqual(check("node_modules/.bin/deno run -A --v8-flags=--expose-gc bench/suite.ts --row wasm --quick"), []);
  assert.deepEqual(check("node scripts/with-broker.mjs -- node --import tsx bench/commit_cadence.ts kafkajs"), []);
  assert.deepEqual(check("npm run bench:pc -- --rounds 5"), []);
  assert.deepEqual(check("npm run bench:consumer -- --help"), []);
  const refused = [
    "npm run bench -- --quik", // a flag run.mjs does not declare
    "npm run bench --quick", // npm would take --quick as its own
    "npm run benchmark", // no such script
    "node --import tsx bench/flor.ts --rounds 1", // no such file
    "node bench/floor.ts --rounds 1", // a .ts file without tsx
    "node_modules/.bin/bun bench/floor.ts --round 1", // --round is not --rounds
    "node --import tsx bench/floor.ts --rounds", // a string option without its value
    "node --import tsx bench/floor.ts 3", // a positional the script does not take
    "npm run bench:rate -- --help", // bench:rate's parseArgs has no --help
    "npm run bench:pc -- --round 5", // bench:pc's own parser
    "node scripts/with-broker.mjs -- node --import tsx bench/commit_cadence.ts kafka", // not one of its passes
    "node scripts/with-broker.mjs --log node --import tsx bench/floor.ts", // no --, and --log is not --log-dir
    "node_modules/.bin/java bench/floor.ts", // not a devDependency, not a runtime
  ];
  for (const line of refused) assert.notDeepEqual(check(line), [], line);
});

test("command lines are read from indented and shell-fenced blocks, not from prose or other fences", () => {
  const md = [
    "Run `npm run nope` inline: not a block.",
    "",
    "    npm run bench -- --quick   # a comment",
    "    node bench/run.mjs",
    "",
    "    deno --version",
    "- a list item",
    "  continued, indented",
    "",
    "```sh",
    "npm run bench",
    "```",
    "```ts",
    "const x = 1;",
    "```",
  ].join("\n");
  assert.deepEqual(commandLines(md).map((l) => l.line), [3, 4, 6, 11]);
  assert.deepEqual(words(`node --import tsx bench/engines.bench.ts --filter 'js per-call'   # one row`), [
    "node",
    "--import",
    "tsx",
    "bench/engines.bench.ts",
    "--filter",
    "js per-call",
  ]);
});
