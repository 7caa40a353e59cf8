/**
 * The README's quick starts, run as a new user runs them: `npm pack` of this repository,
 * a fresh project made with `npm init -y`, the tarball and the clients installed into it
 * (`@platformatic/kafka` linked, `kafkajs` installed offline, both from this checkout), and
 * each quick start pasted from README.md as written: the @platformatic/kafka ones on the
 * pinned Node 24 (as `.mjs` and, after `npm pkg set type=module`, as TypeScript through
 * tsx), on Bun, and on Deno (type-checked first, with the permissions the README names and
 * no more); the KafkaJS one on the Node running this file (Node 20 under `npm test`). Each
 * runs against a real broker over records produced first, gets SIGINT once its handler has
 * seen every record (the README's Ctrl-C), must exit 0 by itself, and must leave its
 * group's committed offsets equal to the topic's end offsets.
 *
 * The code blocks are found by their `<!-- quickstart:NAME` markers in README.md, so the
 * test fails when the README drifts. The only substitutions, each of a literal that must
 * occur exactly once: the broker address `"127.0.0.1:9092"`, `topics: ["orders"]` and
 * the `groupId: "…"` (each quick start has its own, so that trying one after another
 * prints every record each time).
 *
 * `npm run test:pack` drives it from Node (one broker through scripts/with-broker.mjs; without
 * KAFKA_BROKERS it starts its own); it also runs under `bun test` and `deno test -A`. The
 * quick starts run on the pinned Node 24 (scripts/install-node.mjs), bun, deno and tsx from
 * node_modules/.bin (tsx stands for the README's `npx tsx`). Offline: the tarball and the
 * clients come from this checkout. KEEP_PACK_DIR=1 keeps the temporary project for a look.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, test } from "node:test";
import { type Broker, committedOffsets, createTopic, endOffsets, produce, startBroker } from "../broker/broker.ts";
import { BIN, killGroup, type PackProject, packProject, ROOT, sh, watch } from "./pack_project.ts";
import { ensureNode } from "../../scripts/install-node.mjs";

const NODE = process.versions.bun || (globalThis as { Deno?: unknown }).Deno ? "node" : process.execPath;
/** The Node that runs the @platformatic/kafka quick starts (the client needs Node >= 22.22). */
const NODE24 = ensureNode(24, { quiet: true });
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const RECORDS = 300;
const PARTITIONS = 3;

/** A quick start of README.md, by its marker: `node`, `bun`, `deno` (@platformatic/kafka), `kafkajs`. */
type Block = "node" | "bun" | "deno" | "kafkajs";

/**
 * Per run: which README block, the file it is saved as, how the README says to run it (and
 * to prepare the project), that command here, and an optional type check first. `tsx` is the
 * Node block run as TypeScript, after the README's `npm pkg set type=module`.
 */
interface Run {
  block: Block;
  file: string;
  readmeCommand: string;
  command: [string, string[]];
  prepare?: string[];
  check?: [string, string[]];
}
const RUNS: Record<Block | "tsx", Run> = {
  node: { block: "node", file: "consumer.mjs", readmeCommand: "node consumer.mjs", command: [NODE24, ["consumer.mjs"]] },
  kafkajs: { block: "kafkajs", file: "consumer-kafkajs.mjs", readmeCommand: "node consumer.mjs", command: [NODE, ["consumer-kafkajs.mjs"]] },
  tsx: {
    block: "node",
    file: "consumer-tsx.ts",
    readmeCommand: "npx tsx consumer.ts",
    command: [NODE24, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "consumer-tsx.ts"]],
    prepare: ["pkg", "set", "type=module"],
  },
  bun: {
    block: "bun",
    file: "consumer-bun.ts",
    readmeCommand: "bun consumer.ts",
    command: [join(BIN, "bun"), ["consumer-bun.ts"]],
  },
  deno: {
    block: "deno",
    file: "consumer-deno.ts",
    readmeCommand: "deno run --allow-net --allow-env --allow-read consumer.ts",
    command: [join(BIN, "deno"), ["run", "--allow-net", "--allow-env", "--allow-read", "consumer-deno.ts"]],
    // the published .d.ts files type-check as a Deno user sees them (Deno's own Node types: offline)
    check: [join(BIN, "deno"), ["check", "consumer-deno.ts"]],
  },
};

/** The code block after README.md's `<!-- quickstart:RUNTIME` marker (exactly one marker). */
export function quickStart(readme: string, runtime: Block): string {
  const marker = `<!-- quickstart:${runtime} `;
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README.md has a ${marker}…--> marker before the ${runtime} quick start`);
  assert.equal(readme.indexOf(marker, at + 1), -1, `README.md has one ${marker} marker`);
  const m = /^-->\n```(?:ts|js)\n([\s\S]*?)\n```\n/m.exec(readme.slice(readme.indexOf("-->", at)));
  assert.ok(m, `the ${runtime} marker is followed by a \`\`\`ts code block`);
  return m[1];
}

/** Replaces the broker address, topic and group, each of which must occur exactly once. */
export function substitute(code: string, to: { broker: string; topic: string; group: string }): string {
  const swaps: Array<[string, string]> = [
    [`"127.0.0.1:9092"`, JSON.stringify(to.broker)],
    [`topics: ["orders"]`, `topics: [${JSON.stringify(to.topic)}]`],
  ];
  const groups = code.match(/groupId: "[^"]*"/g) ?? [];
  assert.equal(groups.length, 1, "the quick start holds one groupId");
  swaps.push([groups[0], `groupId: ${JSON.stringify(to.group)}`]);
  for (const [from, replacement] of swaps) {
    assert.equal(code.split(from).length - 1, 1, `the quick start holds ${from} exactly once`);
    code = code.replace(from, () => replacement);
  }
  return code;
}

/** Which records a quick start handled, as "partition@offset" → value, read from what it printed or wrote. */
function handled(runtime: Block, stdout: string, project: string, topic: string): Map<string, string> {
  const seen = new Map<string, string>();
  if (runtime === "bun") {
    const dir = join(project, "out");
    if (!existsSync(dir)) return seen;
    for (const f of readdirSync(dir)) {
      const m = /^(.+)-(\d+)-(\d+)\.txt$/.exec(f);
      if (m && m[1] === topic) seen.set(`${m[2]}@${m[3]}`, readFileSync(join(dir, f), "utf8"));
    }
    return seen;
  }
  for (const m of stdout.matchAll(/^(\S+)\/(\d+)@(\d+): (.*)$/gm)) {
    if (m[1] === topic) seen.set(`${m[2]}@${m[3]}`, m[4]);
  }
  return seen;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const asObject = (m: Map<number, string>): Record<string, string> =>
  Object.fromEntries([...m].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]));

test("each quick start has a group of its own: tried one after another, each prints every record", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const groups = (["node", "bun", "deno", "kafkajs"] as const).map((rt) => /groupId: "([^"]*)"/.exec(quickStart(readme, rt))?.[1]);
  assert.equal(new Set(groups).size, 4, `distinct group ids: ${groups.join(", ")}`);
});

describe("the README's quick starts, from the npm pack tarball in a fresh project", { timeout: 300_000 }, () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  let pack: PackProject | undefined;
  let project = "";
  const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

  let broker: Broker | undefined; // started here only without KAFKA_BROKERS
  let brokers = process.env.KAFKA_BROKERS ?? "";

  before(async () => {
    if (!brokers) brokers = (broker = await startBroker()).brokers;
    // npm pack runs `prepack` (the dist/ build) like a real pack; the tarball lands outside the repo.
    pack = packProject({ prefix: "offset-frontier-pack-", links: { "@platformatic/kafka": join(ROOT, "node_modules", "@platformatic", "kafka") } });
    project = pack.project;
  });
  after(async () => {
    await broker?.stop();
    pack?.remove();
  });

  test("TypeScript with its default module resolution (node10, no tsconfig) finds every entry point's types", () => {
    const entries = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<string, unknown>)
      .map((k) => (k === "." ? "offset-frontier" : `offset-frontier/${k.slice(2)}`))
      .filter((e) => !e.endsWith("/confluent") && !e.endsWith("/platformatic") && !e.endsWith("/otel") && !e.endsWith("/prometheus")); // their peers are not installed here
    const file = join(project, "types_check.ts");
    writeFileSync(file, entries.map((e, i) => `import * as m${i} from ${JSON.stringify(e)};\nexport const k${i} = Object.keys(m${i});\n`).join(""));
    try {
      sh(join(ROOT, "node_modules", ".bin", "tsc"), ["--noEmit", "--strict", "--skipLibCheck", "--module", "commonjs", "--types", "node", "--typeRoots", join(ROOT, "node_modules", "@types"), file], project);
    } catch (e) {
      assert.fail(`tsc could not resolve the entry points: ${(e as { stdout?: string }).stdout ?? e}`);
    } finally {
      rmSync(file, { force: true });
    }
  });

  // node first: the .mjs runs in the CommonJS project npm init -y makes; tsx then sets "type": "module"
  for (const name of ["node", "kafkajs", "tsx", "bun", "deno"] as const) {
    const { block, file, readmeCommand, command, prepare, check } = RUNS[name];
    const runtime = block;
    test(`${name}: the quick start as written consumes every record, stops on SIGINT, commits the end offsets`, async () => {
      assert.ok(readme.includes(readmeCommand), `README.md tells how to run it: ${readmeCommand}`);
      if (prepare) {
        assert.ok(readme.includes(`npm ${prepare.join(" ")}`), `README.md tells to run npm ${prepare.join(" ")}`);
        sh(NPM, prepare, project);
      }
      {
        const topic = `quickstart-${name}-${run}`;
        const group = `quickstart-${name}-group-${run}`;
        const values = Array.from({ length: RECORDS }, (_, i) => `order ${i}`);
        await createTopic(brokers, topic, PARTITIONS);
        await produce(brokers, topic, values.map((value, i) => ({ key: `customer-${i % 30}`, value })));
        const end = await endOffsets(brokers, topic);

        const code = substitute(quickStart(readme, runtime), { broker: brokers.split(",")[0].trim(), topic, group });
        writeFileSync(join(project, file), code);
        if (check) sh(check[0], check[1], project);
        const [cmd, args] = command;
        const child = spawn(cmd, args, { cwd: project, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" }, detached: true });
        const watched = watch(child);
        try {
          const t0 = Date.now();
          while (handled(runtime, watched.stdout, project, topic).size < RECORDS) {
            assert.ok(!watched.done, `the ${name} quick start exited before handling every record${watched.tail()}`);
            assert.ok(Date.now() - t0 < 90_000, `the ${name} quick start handled every record within 90 s${watched.tail()}`);
            await sleep(100);
          }
          // The README's Ctrl-C. By pid: when Deno drives this file, ChildProcess.kill() makes the
          // child look killed by the signal even when it exits 0 by itself.
          assert.ok(child.pid !== undefined, `${name} started`);
          process.kill(child.pid, "SIGINT");
          const stopped = await new Promise<{ code: number | null; signal: string | null } | undefined>((resolve) => {
            const limit = setTimeout(() => resolve(undefined), 30_000);
            void watched.exited.then((r) => (clearTimeout(limit), resolve(r)));
          });
          assert.ok(stopped, `the ${name} quick start exited within 30 s of SIGINT${watched.tail()}`);
          assert.deepEqual(stopped, { code: 0, signal: null }, `exit 0 after SIGINT${watched.tail()}`);
        } finally {
          if (!watched.done) killGroup(child.pid); // only the processes this test started
        }

        // No runtime warning but KafkaJS 2.2.4's own (docs/troubleshooting.md): its request queue's negative timer.
        const warnings = watched.stderr.split("\n").filter((l) => /Warning/.test(l) && !/TimeoutNegativeWarning/.test(l));
        assert.deepEqual(warnings, [], `no warning on stderr${watched.tail()}`);
        const seen = handled(runtime, watched.stdout, project, topic);
        const expected = new Set<string>();
        for (const [p, high] of end) for (let o = 0; o < Number(high); o++) expected.add(`${p}@${o}`);
        assert.deepEqual(new Set(seen.keys()), expected, "every delivered offset was handled");
        assert.deepEqual(new Set(seen.values()), new Set(values), "every produced value was handled");
        assert.deepEqual(asObject(await committedOffsets(brokers, group, topic)), asObject(end), "committed = end offsets");
      }
    });
  }
});
