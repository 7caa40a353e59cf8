/**
 * What a bench process needs to know about itself: its command-line options and the
 * runtime it runs on.
 *
 * @module
 */
import process from "node:process";

/** The runtimes the benchmarks run on. */
export type RuntimeName = "node" | "bun" | "deno";

/** The value after `--name` on the command line, if given. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The runtime this process runs on. */
export function runtimeName(): RuntimeName {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  return g.Bun ? "bun" : g.Deno ? "deno" : "node";
}
