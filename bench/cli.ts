/**
 * What a bench process needs to know about itself: its command-line options and the
 * runtime it runs on.
 *
 * @module
 */
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

/** The runtime this process runs on. */
export function runtimeName(): RuntimeName {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  return g.Bun ? "bun" : g.Deno ? "deno" : "node";
}
