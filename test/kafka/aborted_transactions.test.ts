/**
 * Real broker: no handler ever sees a record of an aborted transaction. Two logs, each
 * read from the beginning by a consumer through every binding of this runtime
 * (`ordering: "partition"`, so a partition's last record arriving means all of it did):
 *
 * - the six-record log of two producers' interleaved aborted transactions (A begins,
 *   B begins, B aborts, A again, A aborts, a plain record): the handler sees only the
 *   plain record. KafkaJS's own filter hands on A's first record here; a plain KafkaJS
 *   consumer in a child process (this runtime, no offset-frontier loaded) shows it;
 * - a random interleaving of four transactional producers over two partitions, commits
 *   and aborts mixed, plain records between: the handler sees exactly the committed
 *   records, each once, in offset order.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`; uses
 * KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTopic, withBroker } from "../broker/broker.ts";
import { type Binding, bindings } from "./bindings.ts";
import { runtime, runtimeCommand, unique, waitFor } from "./helpers.ts";
import { randomSteps, type Step, writeTransactionLog } from "./transaction_log.ts";

const SIX: Step[] = [
  { p: 0, send: "a1", partition: 0 },
  { p: 1, send: "b1", partition: 0 },
  { p: 1, end: "abort" },
  { p: 0, send: "a2", partition: 0 },
  { p: 0, end: "abort" },
  { plain: "c1", partition: 0 },
];

/** Reads `topic` through `binding` until every partition's last expected value arrived; returns what the handler saw, by partition. */
async function readThrough(binding: Binding, brokers: string, topic: string, expected: Map<number, string[]>): Promise<Map<number, string[]>> {
  const seen = new Map<number, string[]>();
  const controller = new AbortController();
  const consumer = binding.create({
    brokers,
    groupId: unique("aborted-group"),
    topics: [topic],
    fromBeginning: true,
    ordering: "partition",
    concurrency: 8,
    signal: controller.signal,
    handler: (message, { partition }) => {
      seen.set(partition, [...(seen.get(partition) ?? []), message.value!.toString()]);
      return Promise.resolve();
    },
  });
  await consumer.start();
  const lasts = [...expected].filter(([, v]) => v.length > 0).map(([p, v]) => [p, v[v.length - 1]] as const);
  let failed: unknown;
  consumer.done.catch((e) => (failed = e ?? new Error("ended")));
  await waitFor(() => failed !== undefined || lasts.every(([p, last]) => seen.get(p)?.includes(last)), 60_000, `the last committed record of each partition (saw ${JSON.stringify([...seen])})`);
  if (failed !== undefined) throw failed;
  controller.abort();
  await consumer.done;
  return seen;
}

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "plain_kafkajs_read.ts");

test(`KafkaJS's own read_committed filter hands on a record of an aborted transaction (${runtime()}, plain KafkaJS in a child process)`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("aborted-plain");
    await createTopic(brokers, topic, 1);
    await writeTransactionLog(brokers, topic, SIX);
    const [cmd, args] = runtimeCommand(FIXTURE);
    const child = spawn(cmd, args, { env: { ...process.env, KAFKA_BROKERS: brokers, TOPIC: topic, UNTIL: "c1" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    assert.equal(code, 0, `the plain reader exited 0 (stderr: ${err.slice(-2000)})`);
    const values = JSON.parse(out.trim().split("\n").pop()!) as string[];
    assert.deepEqual(values, ["a1", "c1"], "KafkaJS 2.2.4 leaks a1 (A's transaction was aborted)");
  });
});

for (const binding of bindings()) {
  test(`aborted transactions (${binding.name}): two producers' interleaved aborts, the handler sees only the plain record`, { timeout: 120_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("aborted-six");
      await createTopic(brokers, topic, 1);
      const expected = await writeTransactionLog(brokers, topic, SIX);
      assert.deepEqual([...expected], [[0, ["c1"]]]);
      const seen = await readThrough(binding, brokers, topic, expected);
      assert.deepEqual([...seen], [[0, ["c1"]]]);
    });
  });

  test(`aborted transactions (${binding.name}): four producers interleaved at random over two partitions, exactly the committed records, once each, in order`, { timeout: 180_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("aborted-random");
      await createTopic(brokers, topic, 2);
      const seed = Number(process.env.ABORT_SEED ?? Date.now() % 100_000);
      const steps = randomSteps(seed, 4, 2, 60);
      // a plain record last in each partition, so both have one to wait for
      const expected = await writeTransactionLog(brokers, topic, [...steps, { plain: "end-0", partition: 0 }, { plain: "end-1", partition: 1 }]);
      const aborts = steps.filter((s) => "end" in s && s.end === "abort").length;
      const seen = await readThrough(binding, brokers, topic, expected);
      for (const p of [0, 1]) assert.deepEqual(seen.get(p) ?? [], expected.get(p) ?? [], `partition ${p} (seed ${seed})`);
      console.log(`# aborted (${binding.name}, seed ${seed}): ${[...expected.values()].flat().length} committed records read exactly, ${aborts} abort steps`);
    });
  });
}
