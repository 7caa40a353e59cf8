/**
 * The runner's overhead over the bare client, against a real broker, on Node, Bun and Deno
 * with KafkaJS and on Node with Confluent's client, in one run (`npm run bench:consumer`,
 * i.e. `node scripts/with-broker.mjs -- node --import tsx bench/consumer.bench.ts`).
 *
 * One topic (default 300,000 records, 3 partitions, 10,000 keys, 64-byte values) is produced
 * once; then one child process per runtime (bench/consumer_run.ts), one after the other, reads
 * it in alternating rounds: plain KafkaJS `eachBatch` without commits (the baseline), plain
 * `eachBatch` with `autoCommit`, and the runner with a no-op handler (returns at once) in each
 * ordering, all with default options. Then one more Node child does the same through
 * `@confluentinc/kafka-javascript` and the Confluent binding, its baseline the client's own
 * plain `eachBatch` (KIP-848 protocol, whole fetched batches on both sides; installed into
 * .cache/confluent on first use, a source build of about 2 minutes here), and one child per
 * runtime through `@platformatic/kafka` and its binding, its baseline the client's own
 * `consume()` stream (Node: the pinned Node 24 of scripts/install-node.mjs, as the client
 * needs Node >= 22.22). Each round runs every variant once, rotated; each pass
 * is a new consumer in a new group reading the whole topic. Two discarded passes first.
 * Figures per pass, from the client's first `eachBatch` call on both sides (platformatic: the
 * first Fetch request sent) to the last record: records per wall-clock second and records per CPU-second of the child
 * process (user + system; steadier than wall clock when other processes share the machine).
 * Reported: medians over the rounds, each as a ratio to the baseline's median. The variants
 * `unordered-async` and `key-async` run the runner with a no-op handler that returns a resolved
 * promise in the same rounds: their async ÷ sync figures are paired, per round, from that
 * round's two passes (`unordered-async` over `unordered`, `key-async` over `key`), and so are
 * `plain-async`'s over `plain`: the plain loop with a resolved promise and a then() a record.
 *
 * Prints a table per runtime and writes bench/results/tmp/consumer.json (with --save: the
 * committed bench/results/consumer.json).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createTopic, endOffsets, produce, withBroker } from "../test/broker/broker.ts";
import { unique } from "../test/kafka/helpers.ts";
import { cli, intFlag, type RuntimeName, usageError } from "./cli.ts";
import { listFlag } from "../scripts/cli.mjs";
import type { Client, Rate, RunResult, Variant } from "./consumer_run.ts";
import { median, PAIRS, type Paired, paired, pool, type Row, rows } from "./consumer_results.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const RUNTIMES: RuntimeName[] = ["node", "bun", "deno"];
const CLIENTS: Client[] = ["kafkajs", "confluent", "platformatic"];
const NAME = "consumer.bench";
const BASE: Variant = "plain";
const VARIANTS: Array<{ variant: Variant; name: string }> = [
  { variant: "plain", name: "plain loop, no commits" },
  { variant: "plain-autocommit", name: "plain loop, autocommit" },
  { variant: "unordered", name: "runner, unordered" },
  { variant: "key", name: "runner, key" },
  { variant: "partition", name: "runner, partition" },
  { variant: "batch", name: "runner, key, batch handler" },
  { variant: "unordered-async", name: "runner, unordered, async handler" },
  { variant: "key-async", name: "runner, key, async handler" },
  { variant: "plain-async", name: "plain loop, a resolved promise and then() a record (no runner)" },
];
const o = cli(
  NAME,
  `usage: npm run bench:consumer -- [options]
       (node scripts/with-broker.mjs -- node --import tsx bench/consumer.bench.ts [options])

The runner with a no-op handler against the client's own plain loop without commits
(KafkaJS and Confluent's client: eachBatch; @platformatic/kafka: its consume() stream), on
one broker, one child process per runtime and client (KafkaJS and platformatic on node, bun
and deno; Confluent's client on node). Prints a table per child; writes
bench/results/tmp/consumer.json.

  --runtime LIST       of node, bun, deno (default node,bun,deno)
  --client LIST        of kafkajs, confluent, platformatic (default all; confluent: node only;
                       platformatic on node runs on the pinned Node 24 of scripts/install-node.mjs)
  --records N          records in the topic (default 300000; 10,000 keys)
  --partitions LIST    partition counts (default 3): one topic of --records records per count,
                       every child runs on each (how the cost grows with partitions)
  --node V             the Node of the node children: this one (default), 22 or 24 (the pinned
                       Node of scripts/install-node.mjs); platformatic needs >= 22.22
  --reps N             rounds per child (default 11)
  --processes N        children per runtime and client, one after another (default 1); their
                       rounds are pooled for the medians. A process's JIT settles its own way
                       (the same pass can take 820 ns a record in one process and 1,090 in the
                       next), so one process's medians are that process's, not the runtime's
  --variants LIST      of ${VARIANTS.map((v) => v.variant).join(", ")} (default all; plain, the baseline, always runs)
  --commit-mode M      the runner's commit.mode: eager (default) or interval
  --no-completed-set   the runner without completed sets in its commits
  --async-handler      the runner's handlers return a resolved promise instead of returning at once
                       (the queued path: every record takes its key, as with a real async handler);
                       the paired way is the variants unordered-async and key-async instead: async
                       and sync passes in the same rounds, async ÷ sync per round
  --max-wait-ms N      KafkaJS consumers' maxWaitTimeInMs (default 100; KafkaJS's own default is 5000)
  --tracing M          the runner's tracing: off (default), noop (the API's no-op tracer), sdk (the SDK
                       set up, every span recorded, none exported), sdk-batch (the same through the SDK's
                       BatchSpanProcessor to an exporter that drops each batch); see bench/consumer_run.ts
  --save               write the committed bench/results/consumer.json instead
  -h, --help           this text`,
  {
    runtime: { type: "string" },
    client: { type: "string" },
    records: { type: "string" },
    partitions: { type: "string" },
    node: { type: "string" },
    reps: { type: "string" },
    processes: { type: "string" },
    variants: { type: "string" },
    "commit-mode": { type: "string" },
    "no-completed-set": { type: "boolean" },
    "async-handler": { type: "boolean" },
    "max-wait-ms": { type: "string" },
    tracing: { type: "string" },
    save: { type: "boolean" },
  },
);
const runtimes = (o.runtime === undefined ? RUNTIMES : listFlag(NAME, "runtime", o.runtime, RUNTIMES)) as RuntimeName[];
const clients = (o.client === undefined ? CLIENTS : listFlag(NAME, "client", o.client, CLIENTS)) as Client[];
const RECORDS = o.records === undefined ? 300_000 : intFlag(NAME, "records", o.records, 1);
const REPS = o.reps === undefined ? 11 : intFlag(NAME, "reps", o.reps, 1);
const PROCESSES = o.processes === undefined ? 1 : intFlag(NAME, "processes", o.processes, 1, 50);
const chosen = o.variants === undefined ? undefined : listFlag(NAME, "variants", o.variants, VARIANTS.map((v) => v.variant));
/** The variants this run measures: `--variants`, plus the baseline. */
const RUN = VARIANTS.filter((v) => chosen === undefined || v.variant === BASE || chosen.includes(v.variant));
const KEYS = 10_000;
const PARTITION_COUNTS = (o.partitions ?? "3").split(",").map((x) => intFlag(NAME, "partitions", x.trim(), 1));
const NODE = o.node;
if (NODE !== undefined && !["22", "24"].includes(NODE)) usageError(NAME, `--node is 22 or 24; got ${JSON.stringify(NODE)}`);
const childFlags = [
  ...(o["commit-mode"] !== undefined ? ["--commit-mode", o["commit-mode"]] : []),
  ...(o["no-completed-set"] ? ["--no-completed-set"] : []),
  ...(o["async-handler"] ? ["--async-handler"] : []),
  ...(o["max-wait-ms"] !== undefined ? ["--max-wait-ms", o["max-wait-ms"]] : []),
  ...(o.tracing !== undefined ? ["--tracing", o.tracing] : []),
];
if (o.tracing !== undefined && !["off", "noop", "sdk", "sdk-batch"].includes(o.tracing)) usageError(NAME, `--tracing is off, noop, sdk or sdk-batch; got ${JSON.stringify(o.tracing)}`);

async function command(rt: RuntimeName, client: Client, args: string[]): Promise<[string, string[]]> {
  const bin = (name: string): string => join(ROOT, "node_modules", ".bin", name);
  const script = join("bench", "consumer_run.ts");
  if (rt === "bun") return [bin("bun"), [script, ...args]];
  if (rt === "deno") return [bin("deno"), ["run", "-A", script, ...args]];
  const { ensureNode } = await import("../scripts/install-node.mjs");
  if (NODE !== undefined) return [ensureNode(NODE === "22" ? 22 : 24), ["--import", "tsx", script, ...args]];
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (client === "platformatic" && !(major > 24 || (major === 24 && minor >= 6) || (major === 22 && minor >= 22))) {
    return [ensureNode(24), ["--import", "tsx", script, ...args]];
  }
  return [process.execPath, ["--import", "tsx", script, ...args]];
}

/** Runs one runtime's child for one client; its progress lines pass through, its JSON line is the result. */
async function runChild(rt: RuntimeName, client: Client, brokers: string, topic: string): Promise<RunResult> {
  const [cmd, args] = await command(rt, client, [
    "--topic", topic, "--records", String(RECORDS), "--reps", String(REPS), "--client", client,
    "--variants", RUN.map((v) => v.variant).join(","), ...childFlags,
  ]);
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, KAFKA_BROKERS: brokers }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => {
      // KafkaJS's negative-timeout warnings on Bun and Deno are noise here
      for (const line of s.split("\n")) {
        if (line !== "" && !/TimeoutNegativeWarning|Timeout duration was set|--trace-warnings/.test(line)) {
          process.stderr.write(line + "\n");
        }
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) reject(new Error(`${rt} (${client}): the child exited with ${code}`));
      else resolveRun(JSON.parse(line) as RunResult);
    });
  });
}

/** {@link runChild} `PROCESSES` times, one after another, as one result ({@link pool}). */
async function runChildren(rt: RuntimeName, client: Client, brokers: string, topic: string): Promise<RunResult> {
  const runs: RunResult[] = [];
  for (let i = 0; i < PROCESSES; i++) runs.push(await runChild(rt, client, brokers, topic));
  return pool(runs);
}

/** The target of issue 44: an async no-op handler at ≥ 0.85 × the sync rate per CPU-second. */
const ASYNC_TARGET = 0.85;

const started = Date.now();
await withBroker(async (brokers) => {
  // One topic per partition count, the same records in each.
  const topics = new Map<number, string>();
  const payload = "x".repeat(64);
  for (const partitions of PARTITION_COUNTS) {
    const topic = unique(`bench-consumer-${partitions}p`);
    await createTopic(brokers, topic, partitions);
    const t0 = performance.now();
    for (let i = 0; i < RECORDS; i += 50_000) {
      const n = Math.min(50_000, RECORDS - i);
      await produce(brokers, topic, Array.from({ length: n }, (_, j) => ({ key: `k${(i + j) % KEYS}`, value: `${i + j}:${payload}` })));
    }
    const ends = await endOffsets(brokers, topic);
    const sizes = [...ends.values()].map(Number);
    console.error(
      `produced ${RECORDS.toLocaleString("en")} records (${partitions} partitions: ${Math.min(...sizes)}-${Math.max(...sizes)} each) ` +
        `in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    topics.set(partitions, topic);
  }

  const results: Array<{ result: RunResult; rows: Row[]; partitions: number; paired: ReturnType<typeof paired> }> = [];
  const children: Array<[RuntimeName, Client]> = [
    ...(clients.includes("kafkajs") ? runtimes.map((rt): [RuntimeName, Client] => [rt, "kafkajs"]) : []),
    // Confluent's addon is built for the Node running this (install-confluent.mjs): not for --node.
    ...(clients.includes("confluent") && runtimes.includes("node") && NODE === undefined ? [["node", "confluent"] as [RuntimeName, Client]] : []),
    ...(clients.includes("platformatic") ? runtimes.map((rt): [RuntimeName, Client] => [rt, "platformatic"]) : []),
  ];
  const failures: string[] = [];
  for (const partitions of PARTITION_COUNTS) {
    for (const [rt, client] of children) {
      try {
        const result = await runChildren(rt, client, brokers, topics.get(partitions)!);
        results.push({ result, rows: rows(result, RUN, BASE), partitions, paired: o["async-handler"] ? {} : paired(result) });
      } catch (error) {
        // The other children's figures still count: report this one as failed and go on.
        failures.push(`${partitions} partitions: ${error instanceof Error ? error.message : String(error)}`);
        console.error(`consumer.bench: ${failures.at(-1)}`);
      }
    }
  }
  const label = (r: RunResult): string => (r.client === "kafkajs" ? r.runtime : `${r.runtime} + ${r.client}`);

  const f = (x: number): string => x.toLocaleString("en");
  const spread = (p: Paired): string => `${p.medianCpuRatio.toFixed(2)} (${p.min.toFixed(2)}–${p.max.toFixed(2)})`;
  for (const { result, rows: rs, partitions, paired: pairs } of results) {
    const load = (xs: number[]): string => xs[0].toFixed(1);
    console.log(
      `\n${label(result)} (${result.runtime} ${result.version}, ${result.client} ${result.clientVersion}): no-op handler, ${f(RECORDS)} records, ${partitions} partitions, ` +
        `${PROCESSES > 1 ? `${PROCESSES} processes × ` : ""}${REPS} rounds, medians (1-min load average ${load(result.loadAverage.before)} → ${load(result.loadAverage.after)})`,
    );
    console.log("| variant | records/s | × plain | records per CPU-s | × plain | commits | stalled passes | async ÷ sync per CPU-s, per round: median (min–max) |");
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rs) {
      const pair = PAIRS.find((x) => x.async === r.variant);
      const p = pair && pairs[pair.ordering];
      console.log(
        `| ${r.name} | ${f(r.medianRecordsPerSec)} | ${r.ratioToPlain.wall.toFixed(2)} | ${f(r.medianRecordsPerCpuSec)} | ` +
          `${r.ratioToPlain.cpu.toFixed(2)} | ${r.medianCommits} | ${r.stalled} | ${p ? spread(p) : ""} |`,
      );
    }
    for (const x of result.stalls) console.log(`stalled: round ${x.round} ${x.variant}: ${x.error}`);
  }
  console.log("\nrunner / its client's plain loop without commits (eachBatch; platformatic: its consume() stream), medians (records/s; per CPU-s), target ≥ 0.95 (confluent ≥ 0.9):");
  for (const { result, rows: rs, partitions } of results) {
    const parts = rs.filter((r) => r.variant !== "plain" && r.variant !== "plain-autocommit" && r.variant !== "plain-async").map((r) => {
      const ok = r.ratioToPlain.wall >= (result.client === "confluent" ? 0.9 : 0.95) ? "✓" : "✗";
      return `${r.variant} ${r.ratioToPlain.wall.toFixed(2)} ${ok} (${r.ratioToPlain.cpu.toFixed(2)})`;
    });
    console.log(`  ${label(result)}${PARTITION_COUNTS.length > 1 ? `, ${partitions} partitions` : ""}: ${parts.join(", ")}`);
  }
  if (PARTITION_COUNTS.length > 1) {
    console.log("\nhow the cost grows with partitions (same records), medians: plain records/s; runner records/s and × plain (unordered / key / partition):");
    console.log(`| child | partitions | plain records/s | runner records/s | runner × plain |`);
    console.log("|---|---:|---:|---:|---:|");
    for (const { result, rows: rs, partitions } of results) {
      const plain = rs.find((r) => r.variant === "plain")!;
      const runners = rs.filter((r) => r.variant === "unordered" || r.variant === "key" || r.variant === "partition");
      console.log(
        `| ${label(result)} ${result.version} | ${partitions} | ${f(plain.medianRecordsPerSec)} | ${runners.map((r) => f(r.medianRecordsPerSec)).join(" / ")} | ` +
          `${runners.map((r) => r.ratioToPlain.wall.toFixed(2)).join(" / ")} |`,
      );
    }
  }
  // Each runtime's @platformatic/kafka figures beside KafkaJS's from the same run.
  for (const p of results.filter((x) => x.result.client === "platformatic")) {
    const k = results.find((x) => x.result.client === "kafkajs" && x.result.runtime === p.result.runtime && x.partitions === p.partitions);
    if (!k) continue;
    const parts = p.rows.filter((r) => r.variant !== "plain-autocommit").map((r) => {
      const kr = k.rows.find((x) => x.variant === r.variant)!;
      return `${r.variant} ${f(r.medianRecordsPerSec)} vs ${f(kr.medianRecordsPerSec)} (${(r.medianRecordsPerSec / kr.medianRecordsPerSec).toFixed(2)})`;
    });
    console.log(`platformatic (${p.result.version}) vs kafkajs (${k.result.version}) on ${p.result.runtime}, ${p.partitions} partitions, records/s: ${parts.join(", ")}`);
  }
  // The batch handler's cost per record against the record handler's (both key ordering, no-op):
  // per round, the two passes of that round (rotated, so each pair ran back to back on the same
  // machine load), then min / median / max over the rounds.
  const batchVsRecord = results.flatMap(({ result, partitions }) => {
    const pairs = result.rounds.filter((r) => r.batch && r.key);
    if (pairs.length === 0) return [];
    const spread = (k: keyof Rate) => {
      const xs = pairs.map((r) => r.batch![k] / r.key![k]).sort((a, b) => a - b);
      return { min: +xs[0].toFixed(3), median: +median(xs).toFixed(3), max: +xs[xs.length - 1].toFixed(3) };
    };
    return [{ runtime: result.runtime, client: result.client, partitions, rounds: pairs.length, wall: spread("wall"), cpu: spread("cpu") }];
  });
  if (batchVsRecord.length > 0) {
    console.log("\nbatch handler ÷ record handler (key ordering, no-op), per-round pairs, min / median / max (records/s; per CPU-s):");
    for (const b of batchVsRecord) {
      const r = (x: { min: number; median: number; max: number }): string => `${x.min.toFixed(2)} / ${x.median.toFixed(2)} / ${x.max.toFixed(2)}`;
      const where = PARTITION_COUNTS.length > 1 ? `, ${b.partitions} partitions` : "";
      console.log(`  ${b.client === "kafkajs" ? b.runtime : `${b.runtime} + ${b.client}`}${where}: ${r(b.wall)} (${r(b.cpu)}), ${b.rounds} rounds`);
    }
  }
  // The async handler against the sync one, each round's two passes paired (issue 44's target).
  if (results.some((x) => Object.keys(x.paired).length > 0)) {
    console.log(
      `\nasync handler ÷ returns at once, per-round pairs, records per CPU-s: median (min–max), target ≥ ${ASYNC_TARGET}; ` +
        "async records/s (median); rounds:",
    );
    for (const { result, partitions, paired: pairs } of results) {
      const parts = PAIRS.flatMap(({ ordering }) => {
        const p = pairs[ordering];
        if (!p) return [];
        const mark = ordering === "plain" ? "(no runner: the floor)" : p.medianCpuRatio >= ASYNC_TARGET ? "✓" : "✗";
        const each = p.processMedians ? ` (each process: ${p.processMedians.map((x) => x.toFixed(2)).join(", ")})` : "";
        return [`${ordering} ${spread(p)} ${mark}, ${f(p.medianAsyncRecordsPerSec)} rec/s, ${p.rounds.length}${each}`];
      });
      if (parts.length > 0) console.log(`  ${label(result)}${PARTITION_COUNTS.length > 1 ? `, ${partitions} partitions` : ""}: ${parts.join("; ")}`);
    }
  } else if (o["async-handler"] && RUN.some((v) => PAIRS.some((x) => x.async === v.variant))) {
    console.log("\nasync ÷ sync not paired: --async-handler makes the sync variants async too");
  }
  const nodeKafkaJS = results.find((x) => x.result.runtime === "node" && x.result.client === "kafkajs");
  const nodeConfluent = results.find((x) => x.result.client === "confluent");
  if (nodeKafkaJS && nodeConfluent) {
    const parts = nodeConfluent.rows.map((r) => {
      const k = nodeKafkaJS.rows.find((x) => x.variant === r.variant)!;
      return `${r.variant} ${f(r.medianRecordsPerSec)} vs ${f(k.medianRecordsPerSec)} (${(r.medianRecordsPerSec / k.medianRecordsPerSec).toFixed(2)})`;
    });
    console.log(`\nconfluent vs kafkajs on node, records/s: ${parts.join(", ")}`);
  }

  const out = {
    date: new Date().toISOString(),
    minutes: +((Date.now() - started) / 60_000).toFixed(1),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30) },
    clients: Object.fromEntries(results.map(({ result }) => [result.client, result.clientVersion])),
    topic: { records: RECORDS, partitions: PARTITION_COUNTS, keys: KEYS, value: '"<index>:" + 64 × "x"' },
    runner: {
      handler: o["async-handler"] ? "no-op, returns a resolved promise" : "no-op, returns at once",
      asyncVariants: "unordered-async, key-async: no-op, returns a resolved promise; paired: async ÷ sync per round, that round's two passes",
      batch: "batch variant: key ordering, batch: { maxRecords: 16 }, a no-op batch handler",
      options: "defaults",
      ...(childFlags.length ? { flags: childFlags } : {}),
    },
    rounds: REPS,
    processes: PROCESSES,
    baseline: "the client's own plain loop, no commits: eachBatch (KafkaJS, Confluent), the consume() stream (@platformatic/kafka)",
    measured:
      "the client's first eachBatch call on both sides (platformatic: the first Fetch request sent) → last record; wall clock and the child process's CPU time (user + system)",
    ...(failures.length > 0 ? { failures } : {}),
    ...(batchVsRecord.length > 0 ? { batchVsRecord } : {}),
    runtimes: results.map(({ result, rows: rs, partitions, paired: pairs }) => ({
      partitions,
      runtime: result.runtime,
      client: result.client,
      version: result.version,
      loadAverage: result.loadAverage,
      stalls: result.stalls,
      rows: rs,
      ...(Object.keys(pairs).length > 0 ? { paired: pairs } : {}),
    })),
  };
  if (failures.length > 0) console.log(`\nfailed: ${failures.join("; ")}`);
  const dir = o.save ? join(HERE, "results") : join(HERE, "results", "tmp");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "consumer.json"), JSON.stringify(out, null, 2) + "\n");
  console.log(`\nwrote bench/results/${o.save ? "" : "tmp/"}consumer.json${o.save ? "" : " (--save writes the committed one)"}`);
  if (failures.length > 0) process.exitCode = 1;
});
