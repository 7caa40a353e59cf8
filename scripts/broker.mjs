#!/usr/bin/env node
// `npm run broker`: a local Kafka broker for trying the quick starts from a clone, without
// Docker (the broker the tests use, test/broker/broker.ts: Kafka's jars from Maven, run on
// the local Java 17).
//
//   npm run broker -- [--port 9092] [--topic orders:3 ...]
//
// Starts a single-node KRaft broker on 127.0.0.1:PORT in the foreground, creates each
// --topic NAME[:PARTITIONS] (topic auto-creation is off on this broker, as in the tests),
// prints the address, and runs until SIGINT (Ctrl-C) or SIGTERM, which stop the broker and
// remove its data (nothing is kept between runs); so does the end of the process that
// started it (npm). A second signal exits at once; the
// broker module's exit hook and watchdog then SIGKILL the broker.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import process from "node:process";
import { tsImport } from "tsx/esm/api";
import { intFlag, parseCli, usageError } from "./cli.mjs";

const NAME = "broker";
const { values } = parseCli({
  name: NAME,
  usage: `usage: npm run broker -- [--port 9092] [--topic NAME[:PARTITIONS]] ...
       (node scripts/broker.mjs [options])

Starts a local single-node Kafka broker on 127.0.0.1:PORT (Java 17 and Maven: Kafka's
jars are resolved once and cached in .cache/kafka/), creates the topics, prints the
address and runs until Ctrl-C (SIGINT) or SIGTERM, which stop it and delete its data.
Topic auto-creation is off: create every topic you use with --topic.

  --port N             the client port on 127.0.0.1 (default 9092)
  --topic NAME[:P]     create topic NAME with P partitions (default 1); repeatable
  -h, --help           this text

Then, in another terminal: npm run produce -- --topic NAME --count 20`,
  options: { port: { type: "string", default: "9092" }, topic: { type: "string", multiple: true } },
});
const port = intFlag(NAME, "port", values.port, 1, 65535);
/** `NAME[:PARTITIONS]` → { name, partitions }; a bad one is a usage error. */
const topics = (values.topic ?? []).map((spec) => {
  const m = /^([A-Za-z0-9._-]{1,249})(?::(\d+))?$/.exec(spec);
  if (!m || m[1] === "." || m[1] === "..") {
    usageError(NAME, `--topic takes NAME[:PARTITIONS] (letters, digits, '.', '_', '-'); got ${JSON.stringify(spec)}`);
  }
  return { name: m[1], partitions: m[2] === undefined ? 1 : intFlag(NAME, "topic's partitions", m[2], 1, 10_000) };
});

/** Rejects when 127.0.0.1:port cannot be bound (another broker there, most often). */
function portFree(p) {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(p, "127.0.0.1", () => s.close(() => resolve()));
  });
}
try {
  await portFree(port);
} catch (e) {
  console.error(`broker: 127.0.0.1:${port} is taken (${e.code ?? e.message}): is a broker running there already? Stop it, or pick another --port`);
  process.exit(1);
}

const kafkaVersion = /<kafka\.version>([^<]+)</.exec(readFileSync(new URL("../test/broker/pom.xml", import.meta.url), "utf8"))?.[1];
// Without a class-data-sharing archive the first broker JVM writes one when it stops
// (test/broker/broker.ts): later starts are about twice as fast, that stop takes longer.
const cacheDir = new URL("../.cache/kafka/", import.meta.url);
const writesArchive = process.env.KAFKA_CDS !== "0" &&
  !(existsSync(cacheDir) && readdirSync(cacheDir).some((f) => /^cds-.*\.jsa$/.test(f)));
let broker;
let stopping = false;
async function stop(sig) {
  if (stopping) process.exit(130); // a second signal: at once (the exit hook kills the JVM)
  stopping = true;
  if (!broker) process.exit(130); // still starting: the exit hook and watchdog end the JVM
  console.error(`broker: ${sig}: stopping …${writesArchive ? " (the first stop writes the JVM's class-data archive into .cache/kafka/ for faster starts: up to 30 s, once)" : ""}`);
  const t0 = performance.now();
  await broker.stop();
  console.error(`broker: stopped in ${((performance.now() - t0) / 1000).toFixed(1)} s (its data is deleted)`);
  process.exit(0);
}
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));

console.error(`broker: starting Kafka ${kafkaVersion} on 127.0.0.1:${port} (the first start resolves Kafka with Maven) …`);
const t0 = performance.now();
let mod;
try {
  mod = await tsImport("../test/broker/broker.ts", import.meta.url);
  broker = await mod.startBroker({ port });
} catch (e) {
  console.error(`broker: did not start: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
if (stopping) await stop("signal");
try {
  for (const t of topics) {
    await mod.createTopic(broker.brokers, t.name, t.partitions);
    console.error(`broker: topic ${t.name} (${t.partitions} partition${t.partitions === 1 ? "" : "s"}) ready`);
  }
  // A group's first request creates the offsets topic: do it now, so that the first consumer
  // does not log KafkaJS's ERROR "The group coordinator is not available" while it retries.
  const { Kafka, logLevel } = await import("kafkajs");
  const admin = new Kafka({ clientId: "offset-frontier-broker", brokers: [broker.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.describeGroups(["offset-frontier-warm-up"]);
  } finally {
    await admin.disconnect();
  }
} catch (e) {
  console.error(`broker: preparing the broker (topics, offsets topic) failed: ${e instanceof Error ? e.message : e}`);
  await broker.stop();
  process.exit(1);
}
console.log(`Kafka ${kafkaVersion} at ${broker.brokers} (pid ${broker.pid}), up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.error("broker: topic auto-creation is off: create topics with --topic. Ctrl-C or SIGTERM stops the broker.");
// The broker JVM is unref'd: this timer keeps the process alive until a signal. It also
// stops the broker when the process that started this one is gone: a SIGTERM to
// `npm run broker` ends npm and its `sh` but does not reach this process, which would be
// left running with the broker (a Ctrl-C in a terminal reaches every process of the group).
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent && !stopping) void stop(`parent process ${parent} ended`);
}, 500);
