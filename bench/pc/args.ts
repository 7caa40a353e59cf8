/**
 * The command line of `npm run bench:pc` (bench/pc/run.ts): its usage text and options.
 *
 * @module
 */
import process from "node:process";

/** The `--help` text. */
export const USAGE = `usage: npm run bench:pc -- [--rounds N] [--quick] [--help]

Parallel Consumer (Java) vs the offset-frontier runner (Node + KafkaJS) on one real broker,
alternating sides round by round; each measured run is a fresh process.
  --rounds N  rounds (each scenario once per side per round; default 3, at least 1)
  --quick     1 round, 2,000 records in the example, 30,000 in the no-op runs; writes
              bench/results/quick.pc.json and quick.pc.svg (not the committed results)
  --report F  re-render the table, checks and chart of an earlier run's JSON (no broker)
  --help      this text
Needs Java 17 and Maven (bench/pc/pom.xml is resolved and compiled into .cache/pc/).
KAFKA_BROKERS=host:port uses that broker instead of starting one.`;

/** The options of `argv`, or `help` when asked for, or what is wrong with them; prints nothing, never exits. */
export function readArgs(argv: readonly string[]): { help: true } | { error: string } | { rounds: number; quick: boolean; report: string | undefined } {
  let rounds: number | undefined, quick = false, report: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") return { help: true };
    else if (a === "--quick") quick = true;
    else if (a === "--rounds" || a.startsWith("--rounds=")) {
      const v = a === "--rounds" ? argv[++i] : a.slice("--rounds=".length);
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) return { error: `--rounds needs a whole number ≥ 1; got ${JSON.stringify(v ?? null)}` };
      rounds = n;
    } else if (a === "--report" || a.startsWith("--report=")) {
      report = a === "--report" ? argv[++i] : a.slice("--report=".length);
      if (!report) return { error: "--report needs a results file, e.g. bench/results/pc.json" };
    } else return { error: `unknown option ${JSON.stringify(a)} (see --help)` };
  }
  return { rounds: rounds ?? (quick ? 1 : 3), quick, report };
}

/** The options; prints the usage and exits on `--help`, exits 2 on a bad option. */
export function parseArgs(argv: string[]): { rounds: number; quick: boolean; report: string | undefined } {
  const read = readArgs(argv);
  if ("help" in read) {
    console.log(USAGE);
    process.exit(0);
  }
  if ("error" in read) bad(read.error);
  return read;
}

function bad(msg: string): never {
  console.error(`bench:pc: ${msg}`);
  process.exit(2);
}
