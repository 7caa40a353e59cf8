// @ts-self-types="./cli.d.mts"
/**
 * Command lines of the project's scripts, benchmarks and demo: one parser so that every
 * CLI answers `--help` (usage on stdout, exit 0, before doing anything) and a bad flag
 * or value (one line on stderr naming it, no stack, exit 2) the same way. Types in
 * cli.d.mts.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";

/** Exits 2 after one line on stderr: `NAME: MESSAGE (try --help)`. */
export function usageError(name, message) {
  process.stderr.write(`${name}: ${message} (try --help)\n`);
  process.exit(2);
}

/**
 * Parses `argv` (default: the process's arguments) with node:util `parseArgs`, strict:
 * unknown flags, missing values and stray positionals are usage errors. `--help`/`-h`
 * (before any `--`) prints `usage` and exits 0.
 */
export function parseCli({ name, usage, options = {}, positionals = false, argv = process.argv.slice(2) }) {
  const end = argv.indexOf("--");
  const own = end >= 0 ? argv.slice(0, end) : argv;
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(usage.endsWith("\n") ? usage : `${usage}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: positionals });
  } catch (error) {
    return usageError(name, (error instanceof Error ? error.message : String(error)).split("\n")[0]);
  }
}

/** The integer value of `--flag`, at least `min` (and at most `max`), else a usage error. */
export function intFlag(name, flag, value, min, max = Number.MAX_SAFE_INTEGER) {
  const n = Number(value);
  if (value === undefined || value === "" || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`;
    usageError(name, `--${flag} must be an integer ${range}; got ${JSON.stringify(value)}`);
  }
  return n;
}

/** The comma-separated list of `--flag`, each item one of `allowed`, else a usage error. */
export function listFlag(name, flag, value, allowed) {
  const items = String(value).split(",").filter((s) => s !== "");
  const bad = items.find((s) => !allowed.includes(s));
  if (items.length === 0 || bad !== undefined) {
    usageError(name, `--${flag} takes a comma-separated list of ${allowed.join(", ")}; got ${JSON.stringify(value)}`);
  }
  return items;
}
