/**
 * The docs' examples, run as the README's quick starts are: from the `npm pack` tarball in
 * a fresh project (test/pack/pack_project.ts), pasted from docs/*.md as written.
 *
 * Every `ts`/`js` block of docs/ follows a marker `<!-- example:NAME MODE RUNTIMES … -->`
 * (test/unit/docs_links.test.ts fails a block without one):
 * - `run`: a consumer. Its topic gets records first (keyed JSON orders); it runs until its
 *   group has committed the topic's end offsets, then gets SIGINT (the docs' Ctrl-C) and
 *   must exit 0 by itself;
 * - `exit`: a program that needs no broker; it must exit 0 by itself;
 * - `illustrative`: a fragment, not run (the page says what it stands for).
 * RUNTIMES: node (through tsx, as `npx tsx`; the pinned Node 24 for a block that imports
 * `@platformatic/kafka`, which needs Node >= 22.22), bun, deno (`deno run --allow-net
 * --allow-env --allow-sys`, or `--allow-read` instead of `--allow-sys` for a block that
 * imports `@platformatic/kafka`, as docs/platformatic.md says). Blocks run on Node or Bun
 * are type-checked first (tsc, strict), blocks run on Deno by `deno check`.
 *
 * Substitutions, nothing else: the broker address `"127.0.0.1:9092"`, `topics: ["orders"]`
 * (exactly once), output topics `topic: "orders.…"`, the group (`groupId: "…"` or
 * `"group.id": "…"`, exactly one), an HTTP service `http://127.0.0.1:8080` (a local server
 * here: its first answer asks for a retry), a metrics port `.listen(9464,` (a free one), and
 * on Bun and Deno the entry point `offset-frontier/node` (the page says to change it).
 * The Confluent example runs only where the client is built (.cache/confluent, as the
 * real-broker suites build it), else it is skipped saying so.
 *
 * A `run` block that serves HTTP (`.listen(9464,`, docs/metrics.md) is asked, once its records are
 * committed and before SIGINT: the health example's liveness and readiness probes must answer
 * 200 (running, cluster available, not stalled, lag 0), the exporters example's Prometheus
 * scrape must show this topic's partition_lag series and the total lag at 0.
 *
 * A `run` block that imports `@opentelemetry/exporter-trace-otlp-http` (docs/observability.md)
 * gets records each carrying a producer's `traceparent`, and `OTEL_EXPORTER_OTLP_ENDPOINT`
 * pointing at an OTLP receiver started here (test/pack/otlp_receiver.ts): once it exited, every
 * record's `process <topic>` span must have arrived there, a child of that record's producer context.
 *
 * `npm run test:pack` drives it from Node (one broker through scripts/with-broker.mjs;
 * without KAFKA_BROKERS it starts its own). KEEP_PACK_DIR=1 keeps the project.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { type Broker, committedOffsets, createTopic, endOffsets, produce, startBroker } from "../broker/broker.ts";
import { BIN, killGroup, type PackProject, packProject, ROOT, sh, watch } from "./pack_project.ts";
import { ensureNode } from "../../scripts/install-node.mjs";
import { type OtlpReceiver, otlpReceiver, randomTraceparent } from "./otlp_receiver.ts";

type Runtime = "node" | "bun" | "deno";
type Mode = "run" | "exit" | "illustrative";

/** One marked code block of docs/. */
export interface Example {
  page: string;
  name: string;
  mode: Mode;
  runtimes: Runtime[];
  code: string;
}

const MARKED = /^<!-- example:([\w-]+) (run|exit|illustrative)(?: ((?:node|bun|deno)(?:,(?:node|bun|deno))*))?\b[^\n]*-->\n```(?:ts|js)\n([\s\S]*?)\n```$/gm;

/** Every marked block of docs/*.md, in page order. */
export function docExamples(): Example[] {
  const out: Example[] = [];
  for (const page of readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort()) {
    const md = readFileSync(join(ROOT, "docs", page), "utf8");
    for (const m of md.matchAll(MARKED)) {
      const mode = m[2] as Mode;
      const runtimes = (m[3]?.split(",") ?? []) as Runtime[];
      assert.ok(mode === "illustrative" || runtimes.length > 0, `docs/${page}: example ${m[1]} names the runtimes it runs on`);
      out.push({ page: `docs/${page}`, name: m[1], mode, runtimes, code: m[4] });
    }
  }
  return out;
}

/** The block with the test's broker, topic, group, HTTP service and entry point swapped in. */
export function substitute(
  ex: Example,
  runtime: Runtime,
  to: { broker: string; topic: string; group: string; http: string; port?: number },
): string {
  let code = ex.code;
  const all = (from: string, replacement: string, atLeastOnce: boolean): void => {
    const n = code.split(from).length - 1;
    if (atLeastOnce) assert.ok(n >= 1, `${ex.page} ${ex.name}: holds ${from}`);
    code = code.split(from).join(replacement);
  };
  all(`"127.0.0.1:9092"`, JSON.stringify(to.broker), true);
  assert.equal(code.split(`topics: ["orders"]`).length - 1, 1, `${ex.page} ${ex.name}: holds topics: ["orders"] once`);
  all(`topics: ["orders"]`, `topics: [${JSON.stringify(to.topic)}]`, true);
  all(`topic: "orders.`, `topic: "${to.topic}.`, false);
  const groups = code.match(/groupId: "[^"]*"|"group\.id": "[^"]*"/g) ?? [];
  assert.equal(groups.length, 1, `${ex.page} ${ex.name}: holds one group id`);
  code = code.replace(groups[0], groups[0].replace(/"[^"]*"$/, JSON.stringify(to.group)));
  all("http://127.0.0.1:8080", to.http, false);
  all(".listen(9464,", `.listen(${to.port ?? 0},`, false);
  if (runtime !== "node") all(`"offset-frontier/node"`, `"offset-frontier/${runtime}"`, false);
  return code;
}

/** A TCP port free now on 127.0.0.1 (for an example's HTTP server). */
function freePort(): Promise<number> {
  const s = createServer();
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => {
    const { port } = s.address() as AddressInfo;
    s.close(() => resolve(port));
  }));
}

/** GET `path` of the example's server: its status and body, or undefined while it does not answer. */
async function get(port: number, path: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

/**
 * What the example's HTTP server answers once its consumer committed every record (an example
 * that serves `.listen(9464,`): the probes of docs/metrics.md (liveness and readiness 200, the
 * state, the cluster available, no stall, lag 0), the Prometheus scrape (this topic's
 * partition_lag series and the total lag 0, with the example's labels). Waits up to 20 s for
 * the lag to reach 0 (the log end is seen by a fetch after the last commit).
 */
async function probeAnswers(ex: Example, port: number, topic: string, tail: () => string): Promise<void> {
  const health = ex.code.includes("/readyz");
  const t0 = Date.now();
  let last = "";
  for (;;) {
    if (health) {
      const live = await get(port, "/healthz"), ready = await get(port, "/readyz"), other = await get(port, "/nothing");
      last = JSON.stringify({ live, ready, other });
      const body = ready?.status === 200 ? JSON.parse(ready.body) as Record<string, unknown> : undefined;
      if (live?.status === 200 && other?.status === 404 && body?.state === "running" && body.cluster === "available" && body.stalled === false && body.lag === 0) return;
    } else {
      const scrape = await get(port, "/metrics");
      last = scrape === undefined ? "no answer" : scrape.body.split("\n").filter((l) => l.includes("_lag")).join("\n");
      const lines = scrape?.body.split("\n") ?? [];
      const partitionLag = lines.filter((l) => l.startsWith("offset_frontier_partition_lag{") && l.includes(`topic="${topic}"`));
      if (scrape?.status === 200 && partitionLag.length > 0 && partitionLag.every((l) => l.endsWith(" 0")) && lines.includes(`offset_frontier_lag{service="orders"} 0`)) return;
    }
    assert.ok(Date.now() - t0 < 20_000, `${ex.name}: its server's answers once every record was committed (${health ? "live and ready, running, available, not stalled, lag 0" : "scrape with lag 0"}): ${last}${tail()}`);
    await sleep(250);
  }
}

const RECORDS = 30;
const KEYS = 5;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const CONFLUENT = join(ROOT, ".cache", "confluent", "node_modules", "@confluentinc", "kafka-javascript");
const confluentBuilt = (): boolean => existsSync(join(CONFLUENT, "build", "Release", "confluent-kafka-javascript.node"));
// Decided once, as the file loads: a build finishing later (npm test builds it in the
// background) must not add the Confluent example to a type-check whose project has no link to it.
const haveConfluent = confluentBuilt();

/** How the docs say to run a file on each runtime, here. */
/** The Node that runs the Node examples (this one, unless Bun or Deno drives this file). */
const NODE = process.versions.bun || (globalThis as { Deno?: unknown }).Deno ? "node" : process.execPath;

/**
 * Node runs an example with tsx's loader in its own process (`node --import tsx`), not through
 * tsx's CLI: the CLI relays a SIGINT sent to it only after waiting 30 ms for its child to
 * report one, and SIGKILLs the child (exit 130) when the child does not report within 30 ms
 * more, so under CI load an example that shuts down correctly failed (CI10: exit 130). The
 * README's `npx tsx` is what quickstart.test.ts runs.
 */
function command(runtime: Runtime, file: string, code: string): [string, string[]] {
  const platformatic = code.includes(`from "@platformatic/kafka"`);
  const node = platformatic ? ensureNode(24, { quiet: true }) : NODE; // the client needs Node >= 22.22
  if (runtime === "node") return [node, ["--import", pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href, file]];
  if (runtime === "bun") return [join(BIN, "bun"), [file]];
  // @platformatic/kafka reads a WASM file of its own from node_modules: docs/platformatic.md names --allow-read
  return [join(BIN, "deno"), ["run", "--allow-net", "--allow-env", platformatic ? "--allow-read" : "--allow-sys", file]];
}

/** The HTTP service the handler examples call: the first answer of each path asks for a retry. */
function service(): Promise<Server> {
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const first = !seen.has(req.url ?? "");
      seen.add(req.url ?? "");
      if (req.url === "/orders/bulk") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ failed: first ? [0] : [] })); // the first batch's first record is refused once
      } else if (first) {
        res.writeHead(429, { "retry-after": "1" }).end();
      } else {
        res.end("ok");
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const examples = docExamples();

test("docs/ holds runnable examples, each marked with how it runs", () => {
  assert.ok(examples.filter((e) => e.mode !== "illustrative").length >= 8, examples.map((e) => `${e.page} ${e.name}`).join(", "));
  assert.equal(new Set(examples.map((e) => e.name)).size, examples.length, "example names are distinct");
});

describe("the docs' examples, from the npm pack tarball in a fresh project", { timeout: 900_000 }, () => {
  const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
  let broker: Broker | undefined; // started here only without KAFKA_BROKERS
  let brokers = process.env.KAFKA_BROKERS ?? "";
  let pack: PackProject | undefined;
  let server: Server | undefined;
  let http = "";

  before(async () => {
    if (!brokers) brokers = (broker = await startBroker()).brokers;
    const links: Record<string, string> = {};
    // docs/tracing.md, docs/observability.md
    const otel = ["@opentelemetry/api", "@opentelemetry/context-async-hooks", "@opentelemetry/core", "@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http"];
    for (const name of ["prom-client", ...otel, "@platformatic/kafka"]) links[name] = join(ROOT, "node_modules", name);
    if (haveConfluent) links["@confluentinc/kafka-javascript"] = CONFLUENT;
    // "type": "module": the examples use top-level await, which tsx runs only in an ES module
    pack = packProject({ prefix: "offset-frontier-docs-", npm: [["pkg", "set", "type=module"]], links });
    server = await service();
    http = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.close();
    await broker?.stop();
    pack?.remove();
  });

  const runnable = examples.filter((e) => e.mode !== "illustrative");
  const skipped = (e: Example): string | false =>
    e.code.includes("@confluentinc/kafka-javascript") && !haveConfluent
      ? "the Confluent client is not built here (.cache/confluent: node scripts/install-confluent.mjs)"
      : false;

  // Bun runs the @platformatic/kafka examples (Node 20 cannot): tsc checks them too.
  const typed = (e: Example): boolean => (e.runtimes.includes("node") || e.runtimes.includes("bun")) && !skipped(e);
  test("the examples run on Node or Bun type-check (tsc, strict)", { skip: !runnable.some(typed) }, () => {
    const project = pack!.project;
    const files: string[] = [];
    for (const e of runnable.filter(typed)) {
      const file = `check-${e.name}.ts`;
      const fake = { broker: "127.0.0.1:1", topic: "t", group: "g", http: "http://127.0.0.1:1" };
      writeFileSync(join(project, file), e.mode === "run" ? substitute(e, "node", fake) : e.code);
      files.push(file);
    }
    try {
      sh(join(BIN, "tsc"), ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--target", "es2022", "--types", "node", "--typeRoots", join(ROOT, "node_modules", "@types"), ...files], project);
    } catch (e) {
      assert.fail(`tsc: ${(e as { stdout?: string }).stdout ?? e}`);
    }
  });

  for (const ex of runnable) {
    for (const runtime of ex.runtimes) {
      test(`${ex.page} ${ex.name} on ${runtime}: ${ex.mode === "run" ? "consumes every record, stops on SIGINT, commits the end offsets" : "runs to exit 0"}`, { skip: skipped(ex) }, async () => {
        const project = pack!.project;
        const topic = `docs-${ex.name}-${runtime}-${run}`;
        const group = `docs-${ex.name}-${runtime}-group-${run}`;
        const file = `example-${ex.name}-${runtime}.ts`;
        let end = new Map<number, string>();
        let port = 0; // the example's HTTP port (`.listen(9464,`), if it has one
        const otlp = ex.mode === "run" && ex.code.includes(`from "@opentelemetry/exporter-trace-otlp-http"`);
        const produced = new Map<string, { traceId: string; spanId: string }>(); // value → its producer context
        let receiver: OtlpReceiver | undefined;
        if (otlp) receiver = await otlpReceiver();
        if (ex.mode === "run") {
          await createTopic(brokers, topic, 3);
          for (const out of new Set([...ex.code.matchAll(/topic: "orders(\.[\w.-]+)"/g)].map((m) => m[1]).concat(".DLT"))) {
            await createTopic(brokers, `${topic}${out}`, 3); // outputs and dead letters (topic creation is off)
          }
          await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => {
            const value = JSON.stringify({ order: i, customer: `customer-${i % KEYS}`, amount: 10 + i });
            if (!otlp) return { key: `customer-${i % KEYS}`, value };
            const { traceparent, traceId, spanId } = randomTraceparent();
            produced.set(value, { traceId, spanId });
            return { key: `customer-${i % KEYS}`, value, headers: { traceparent } };
          }));
          end = await endOffsets(brokers, topic);
          port = await freePort();
          writeFileSync(join(project, file), substitute(ex, runtime, { broker: brokers.split(",")[0].trim(), topic, group, http, port }));
        } else {
          writeFileSync(join(project, file), ex.code);
        }
        if (runtime === "deno") sh(join(BIN, "deno"), ["check", file], project);
        const [cmd, args] = command(runtime, file, ex.code);
        const env = { ...process.env, NO_COLOR: "1", ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {}) };
        const child = spawn(cmd, args, { cwd: project, stdio: ["ignore", "pipe", "pipe"], env, detached: true });
        const watched = watch(child, 1500);
        try {
          if (ex.mode === "run") {
            const t0 = Date.now();
            // partitions without records have nothing to commit
            const want = JSON.stringify([...end].filter(([, high]) => high !== "0").sort((a, b) => a[0] - b[0]));
            for (;;) {
              // A read can meet a coordinator that is moving or loading (KafkaJS's admin does not
              // retry NOT_COORDINATOR): that is "not yet", until the bound.
              const have = await committedOffsets(brokers, group, topic).then(
                (c) => JSON.stringify([...c].sort((a, b) => a[0] - b[0])),
                (e: unknown) => `(read failed: ${e instanceof Error ? e.message : e})`,
              );
              if (have === want) break;
              assert.ok(!watched.done, `${ex.name} exited before committing the end offsets (${have} of ${want})${watched.tail()}`);
              assert.ok(Date.now() - t0 < 120_000, `${ex.name} committed the end offsets within 120 s (${have} of ${want})${watched.tail()}`);
              await sleep(250);
            }
            if (ex.code.includes(".listen(9464,")) await probeAnswers(ex, port, topic, () => watched.tail());
            assert.ok(child.pid !== undefined, `${ex.name} started`);
            process.kill(child.pid, "SIGINT"); // the docs' Ctrl-C (by pid: see quickstart.test.ts)
          }
          const stopped = await new Promise<{ code: number | null; signal: string | null } | undefined>((resolve) => {
            const limit = setTimeout(() => resolve(undefined), ex.mode === "run" ? 30_000 : 60_000);
            void watched.exited.then((r) => (clearTimeout(limit), resolve(r)));
          });
          assert.ok(stopped, `${ex.name} exited within the bound${watched.tail()}`);
          assert.deepEqual(stopped, { code: 0, signal: null }, `${ex.name} exits 0${watched.tail()}`);
          if (receiver) {
            // Every record's span reached the OTLP endpoint, in its producer's trace, a child of its producer's span.
            const spans = receiver.spans.filter((s) => s.name === `process ${topic}` && s.scope === "offset-frontier");
            const missing = [...produced].filter(([, p]) => !spans.some((s) => s.traceId === p.traceId && s.parentSpanId === p.spanId));
            assert.deepEqual(receiver.refused, [], "the receiver refused no request");
            assert.equal(missing.length, 0, `${missing.length} of ${RECORDS} records have no process span at the endpoint (${receiver.spans.length} spans received)${watched.tail()}`);
          }
        } finally {
          if (!watched.done) killGroup(child.pid); // only the processes this test started
          await receiver?.close();
        }
      });
    }
  }
});
