/**
 * What a bench process needs to know about itself: its command-line options and the
 * runtime it runs on.
 *
 * @module
 */
import process from "node:process";
import { type CliOption, parseCli } from "../scripts/cli.mjs";

export { intFlag, usageError } from "../scripts/cli.mjs";

/** The runtimes the benchmarks run on. */
export type RuntimeName = "node" | "bun" | "deno";

/**
 * This process's options, parsed strictly: `--help` prints `usage` and exits 0, an
 * unknown flag or a missing value prints one line and exits 2.
 */
export function cli<O extends Record<string, CliOption>>(
  name: string,
  usage: string,
  options: O,
): { [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string } {
  return parseCli({ name, usage, options }).values;
}

/** The value after `name` on the command line, if any (for bench files run by bench/run.mjs with fixed flags). */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The runtime this process runs on. */
export function runtimeName(): RuntimeName {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  return g.Bun ? "bun" : g.Deno ? "deno" : "node";
}
