/**
 * The chaos suite's command line (`npm run chaos -- …`); see {@link USAGE}.
 *
 * Progress goes to stderr; stdout carries the result: a table per round and a summary,
 * or with `--json` exactly one line, `{"rounds":K,"records":[…],"lost":[…],…}` (one array
 * entry per round for every figure). Exit code 0 when every round lost nothing and ended
 * with committed = end offsets, 1 otherwise, 2 for a bad flag.
 *
 * @module
 */
import process from "node:process";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type ChaosOptions, type MemberRuntime, type RoundResult, runChaos } from "./harness.ts";
import { DUPLICATE_CAUSES } from "./analyze.ts";
import { CLIENTS, type ClientName, MODES, type ModeName } from "./modes.ts";

/** The `--help` text. */
export const USAGE = `usage: npm run chaos -- --rounds K --runtime node|bun|deno [options]

Rounds of a 3-member consumer group (ordering "key", concurrency 32) on a 6-partition
topic under faults: members SIGKILLed (a quarter SIGTERMed) and replaced every 1-4 s, a
late joiner, one broker SIGKILL + restart, dropped connections. Counts lost and
duplicated records, key-order violations, committed = end offsets, the dead letter.

options:
  --rounds K            rounds to run (default 1)
  --runtime RT          runtime of the members: node, bun or deno (default node)
  --json                print one JSON line of per-round arrays instead of tables
  --records N           records per round, the poison included (default 30000)
  --seed S              seed of round 1 (round i uses S + i - 1; default random)
  --outage-every N      every N-th round keeps the broker down for --outage-ms (default 10; 0: never)
  --outage-ms MS        length of an outage (default 60000)
  --fault-ms MS         how long faults are injected per round (default 24000)
  --timeout-ms MS       after the faults, how long to wait for committed = end (default 180000)
  --mode M              at-least-once (default) or exactly-once (transactions, KafkaJS and platformatic;
                        adds outputDuplicates, outputMissing, outputStrays, outputRecords,
                        and the same four of a second stage that reads the outputs with
                        consume(): secondStageDuplicates, secondStageMissing, …)
  --handler H           record (default) or batch: the members run the batch handler
                        (batch: { maxRecords: 16 }, per-record results: a failing record
                        is an Error at its index, only it runs again); adds batches,
                        batchedRecords and largestBatch (over every member)
  --client C            kafkajs (default), confluent (@confluentinc/kafka-javascript, Node only)
                        or platformatic (@platformatic/kafka; on Node the members run on the
                        pinned Node 24); confluent and platformatic: at-least-once only
  --kafkajs-kafka K     with or without (default): whether the KafkaJS members' consume() also
                        gets kafka (the KafkaJS client) or only its consumer, as the docs show
                        (exactly-once members always pass it); --client kafkajs only
  --protocol P          the group protocol: confluent eager, cooperative or consumer (KIP-848, default);
                        platformatic eager (default) or cooperative (cooperative-sticky)
  --keep-logs           keep the members' logs and the broker's (their paths are printed)
  --faults-after-join   start the faults and the production when the first member has
                        joined (at most 120 s), not at the members' spawn: a client whose
                        members start slower meets the same faults with work under way
  --help                this text

exit code: 0 when every round lost 0 and ended with committed = end, 1 otherwise, 2 for a bad flag.`;

/** A flag the CLI refuses: printed as one line, exit code 2. */
class UsageError extends Error {}

function int(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}; got ${v}`);
  return n;
}

/** Parses argv into options; `help` when --help was given. */
export function parseCli(argv: string[]): { help: true } | { help: false; json: boolean; options: ChaosOptions & { protocol?: string } } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        rounds: { type: "string" },
        runtime: { type: "string" },
        json: { type: "boolean" },
        records: { type: "string" },
        seed: { type: "string" },
        "outage-every": { type: "string" },
        "outage-ms": { type: "string" },
        "fault-ms": { type: "string" },
        "timeout-ms": { type: "string" },
        mode: { type: "string" },
        handler: { type: "string" },
        client: { type: "string" },
        protocol: { type: "string" },
        "kafkajs-kafka": { type: "string" },
        "keep-logs": { type: "boolean" },
        "faults-after-join": { type: "boolean" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message.split("\n")[0] : String(e));
  }
  if (values.help) return { help: true };
  const runtime = values.runtime ?? "node";
  if (runtime !== "node" && runtime !== "bun" && runtime !== "deno") throw new UsageError(`--runtime must be node, bun or deno; got ${runtime}`);
  const mode = values.mode ?? "at-least-once";
  if (!(mode in MODES)) throw new UsageError(`--mode must be at-least-once or exactly-once; got ${mode}`);
  if (!MODES[mode as ModeName].implemented) throw new UsageError(MODES[mode as ModeName].missing ?? `--mode ${mode} is not implemented`);
  const handler = values.handler ?? "record";
  if (handler !== "record" && handler !== "batch") throw new UsageError(`--handler must be record or batch; got ${handler}`);
  const client = values.client ?? "kafkajs";
  if (!(client in CLIENTS)) throw new UsageError(`--client must be kafkajs, confluent or platformatic; got ${client}`);
  if (!CLIENTS[client as ClientName].implemented) throw new UsageError(CLIENTS[client as ClientName].missing ?? `--client ${client} is not implemented`);
  if (client === "confluent" && runtime !== "node") throw new UsageError(`--client confluent runs on Node only (Bun and Deno cannot load its addon); got --runtime ${runtime}`);
  if (client === "confluent" && mode !== "at-least-once") throw new UsageError(`--mode ${mode} runs with --client kafkajs or platformatic; got --client ${client}`);
  const protocol = values.protocol;
  if (protocol !== undefined && client === "kafkajs") throw new UsageError("--protocol applies to --client confluent or platformatic only");
  const protocols = client === "confluent" ? ["eager", "cooperative", "consumer"] : ["eager", "cooperative"];
  if (protocol !== undefined && !protocols.includes(protocol)) {
    throw new UsageError(`--protocol must be ${protocols.join(", ").replace(/, (\w+)$/, " or $1")} with --client ${client}; got ${protocol}`);
  }
  if (protocol === "cooperative" && mode === "exactly-once") throw new UsageError("--mode exactly-once runs with eager assignors only (the platformatic binding refuses cooperative-sticky with transactional)");
  const kafkajsKafka = values["kafkajs-kafka"];
  if (kafkajsKafka !== undefined && kafkajsKafka !== "with" && kafkajsKafka !== "without") {
    throw new UsageError(`--kafkajs-kafka must be with or without; got ${kafkajsKafka}`);
  }
  if (kafkajsKafka !== undefined && client !== "kafkajs") throw new UsageError("--kafkajs-kafka applies to --client kafkajs only");
  if (kafkajsKafka === "without" && mode === "exactly-once") throw new UsageError("--mode exactly-once needs kafka (the transactional producers): --kafkajs-kafka without does not apply");
  const records = int("records", values.records, 2);
  const seed = int("seed", values.seed, 0);
  const outageEvery = int("outage-every", values["outage-every"], 0);
  const outageMs = int("outage-ms", values["outage-ms"], 0);
  const faultMs = int("fault-ms", values["fault-ms"], 1_000);
  const drainTimeoutMs = int("timeout-ms", values["timeout-ms"], 1_000);
  return {
    help: false,
    json: values.json ?? false,
    options: {
      rounds: int("rounds", values.rounds, 1) ?? 1,
      runtime: runtime as MemberRuntime,
      mode: mode as ModeName,
      client: client as ClientName,
      ...(handler === "batch" ? { handler } : {}),
      ...(protocol !== undefined ? { protocol } : {}),
      ...(kafkajsKafka !== undefined ? { kafkajsKafka: kafkajsKafka as "with" | "without" } : {}),
      keepLogs: values["keep-logs"] ?? false,
      faultsAfterJoin: values["faults-after-join"] ?? false,
      ...(records !== undefined ? { records } : {}),
      ...(seed !== undefined ? { seed } : {}),
      outageEvery: outageEvery ?? 10, // one round in ten is an outage round
      ...(outageMs !== undefined ? { outageMs } : {}),
      ...(faultMs !== undefined ? { faultMs } : {}),
      ...(drainTimeoutMs !== undefined ? { drainTimeoutMs } : {}),
    },
  };
}

/** The per-round figures as `{ rounds, field: [round 1, round 2, …], … }`. */
export function toJson(results: readonly RoundResult[]): Record<string, unknown> {
  const out: Record<string, unknown> = { rounds: results.length };
  const fields = new Set<string>();
  for (const r of results) for (const k of Object.keys(r)) if (k !== "extra" && k !== "round") fields.add(k);
  for (const r of results) for (const k of Object.keys(r.extra)) fields.add(k);
  for (const k of fields) {
    out[k] = results.map((r) => {
      const v = (r as unknown as Record<string, unknown>)[k] ?? r.extra[k];
      return v === undefined ? null : v;
    });
  }
  return out;
}

/** Whether every round lost nothing and ended with committed = end. */
export function passed(results: readonly RoundResult[]): boolean {
  return results.length > 0 && results.every((r) =>
    !r.error && r.lost === 0 && r.committedEqualsEnd && (r.extra.outputDuplicates ?? 0) === 0 && (r.extra.outputMissing ?? 0) === 0 &&
    (r.extra.secondStageDuplicates ?? 0) === 0 && (r.extra.secondStageMissing ?? 0) === 0
  );
}

/** A readable table per round plus a summary. */
export function table(results: readonly RoundResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`round ${r.round}  (seed ${r.seed}, members on ${r.runtime}, ${(r.durationMs / 1000).toFixed(0)} s)`);
    if (r.error) {
      lines.push(`  FAILED: ${r.error}`, "");
      continue;
    }
    const rows: Array<[string, string | number | boolean]> = [
      ["records in the topic", r.records],
      ["  written twice by the producer", r.produceDuplicates],
      ["lost", r.lost],
      ["duplicates", r.duplicates],
      ...DUPLICATE_CAUSES.filter((c) => r.duplicatesBy[c] > 0).map((c): [string, number] => [`  after ${c}`, r.duplicatesBy[c]]),
      ["  redone though committed", r.redoneAfterCommit],
      ["order violations", r.orderViolations],
      ["committed = end", r.committedEqualsEnd],
      ["dead-lettered (copies)", `${r.deadLettered} (${r.deadLetterCopies})`],
      ["exited on their own", r.exitedOnOwn],
      ["SIGTERM needed SIGKILL", r.termForced],
      ["log mismatches", r.mismatches],
      ["member start failures", r.startFailures],
      ["consumer failures", r.consumerFailures],
      ["faults", `${r.sigkills} SIGKILL, ${r.sigterms} SIGTERM, broker down ${(r.brokerDownMs / 1000).toFixed(1)} s, ${r.connectionsDropped} connections dropped`],
      ["member processes", r.processes],
      ["settled after faults", `${(r.settleMs / 1000).toFixed(1)} s${r.timedOut ? " (timed out)" : ""}`],
      ...Object.entries(r.extra).map(([k, v]): [string, number | boolean] => [k, v]),
    ];
    for (const [k, v] of rows) lines.push(`  ${k.padEnd(30)} ${v}`);
    lines.push("");
  }
  const sum = (f: (r: RoundResult) => number): number => results.reduce((n, r) => n + f(r), 0);
  lines.push(
    `summary: ${results.length} rounds, lost ${sum((r) => r.lost)}, duplicates ${sum((r) => r.duplicates)}, ` +
      `order violations ${sum((r) => r.orderViolations)}, committed = end in ${results.filter((r) => r.committedEqualsEnd).length}/${results.length}, ` +
      `failed rounds ${results.filter((r) => r.error).length} → ${passed(results) ? "PASS" : "FAIL"}`,
  );
  return lines.join("\n");
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`chaos: ${e.message} (see --help)`);
      return 2;
    }
    throw e;
  }
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const { protocol, ...options } = parsed.options;
  if (options.client === "confluent") {
    // The members read it from their environment (harness.ts passes its own on).
    process.env.CONFLUENT_PROTOCOL = protocol ?? "consumer";
    const { ensureConfluent } = await import("../../scripts/install-confluent.mjs");
    ensureConfluent();
  }
  if (options.client === "platformatic") process.env.PLATFORMATIC_PROTOCOL = protocol ?? "eager"; // read by the members
  const results = await runChaos({ ...options, progress: (line) => console.error(line) });
  for (const r of results) if (r.logDir) console.error(`round ${r.round} logs: ${r.logDir}`);
  if (parsed.json) process.stdout.write(`${JSON.stringify({ ...toJson(results), ...(options.handler === "batch" ? { handler: "batch" } : {}), ...(options.client === "kafkajs" ? { kafkajsKafka: options.kafkajsKafka ?? "without" } : {}) })}\n`);
  else console.log(table(results));
  return passed(results) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => process.exit(130)); // runs the exit hooks
  main().then((code) => process.exit(code), (e) => {
    console.error(e instanceof Error ? e.stack ?? e.message : e);
    process.exit(1);
  });
}
