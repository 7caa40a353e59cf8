/** Types of cli.mjs: the command-line parser shared by the project's scripts. */

/** One option of {@link parseCli}: as node:util `parseArgs` takes it. */
export interface CliOption {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  default?: string | boolean | string[] | boolean[];
}

/** Exits 2 after one line on stderr: `NAME: MESSAGE (try --help)`. */
export function usageError(name: string, message: string): never;

/** Parses the arguments strictly; `--help` prints `usage` and exits 0; errors exit 2. */
export function parseCli<O extends Record<string, CliOption>>(config: {
  name: string;
  usage: string;
  options?: O;
  positionals?: boolean;
  argv?: string[];
}): {
  values: { [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string };
  positionals: string[];
};

/** The integer value of `--flag`, at least `min` (and at most `max`), else a usage error. */
export function intFlag(name: string, flag: string, value: string | undefined, min: number, max?: number): number;

/** The comma-separated list of `--flag`, each item one of `allowed`, else a usage error. */
export function listFlag<T extends string>(name: string, flag: string, value: string, allowed: readonly T[]): T[];
