/**
 * Real broker, Deno only: Deno's built-in OpenTelemetry with a consumer. A child process
 * (fixtures/deno_otel_consumer.ts) runs under `deno run` with `OTEL_DENO=true` and no SDK set
 * up: Deno registers its own tracer provider, context manager and W3C propagator with
 * `@opentelemetry/api`, so the bindings' default turns tracing on, and Deno exports the spans
 * over OTLP/HTTP (JSON here) to a receiver this test starts. Records are produced each with a
 * `traceparent` of its own; at the receiver every record has a `process <topic>` span of
 * offset-frontier's in its producer's trace, a child of its producer's span, and the span the
 * handler opened through `trace.getTracer(…)` nests under it. Through KafkaJS and
 * `@platformatic/kafka`.
 *
 * On Node and Bun it is skipped (saying why): their OpenTelemetry is the SDK's
 * (consumer_tracing.test.ts). Uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTopic, produce, withBroker } from "../broker/broker.ts";
import { otlpReceiver, randomTraceparent } from "../pack/otlp_receiver.ts";
import { runtime, unique } from "./helpers.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, "fixtures", "deno_otel_consumer.ts");
const ROOT = join(HERE, "..", ".."); // deno.json and node_modules
const skip = runtime() === "deno" ? false : `Deno's built-in OpenTelemetry: runs on Deno only (this is ${runtime()})`;
if (skip) console.log(`deno_otel.test.ts skipped: ${skip}`);

/** Runs the child to its end; its stdout's JSON line, or a failure with its output. */
function runChild(env: Record<string, string>): Promise<{ seen: Array<{ value: string; traceId?: string; spanId?: string }> }> {
  const child = spawn(process.execPath, ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-sys", CHILD], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").pop() ?? "";
      if (code !== 0) return reject(new Error(`child exited ${code ?? signal}\n${stderr.slice(-3000)}\n${stdout.slice(-2000)}`));
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`child printed no result\n${stderr.slice(-3000)}\n${stdout.slice(-2000)}`));
      }
    });
  });
}

for (const binding of ["kafkajs", "platformatic"] as const) {
  test(`Deno's built-in OpenTelemetry (${binding}): tracing on by default, spans exported in the producer's trace, the handler's span nested`, { skip, timeout: 180_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique(`deno-otel-${binding}`);
      await createTopic(brokers, topic, 2);
      const N = 40;
      const producers = new Map<string, { traceId: string; spanId: string }>();
      await produce(brokers, topic, Array.from({ length: N }, (_, i) => {
        const { traceparent, traceId, spanId } = randomTraceparent();
        producers.set(`v${i}`, { traceId, spanId });
        return { key: `k${i % 7}`, value: `v${i}`, headers: { traceparent } };
      }));
      const receiver = await otlpReceiver();
      try {
        const { seen } = await runChild({
          OTEL_DENO: "true",
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_SERVICE_NAME: "offset-frontier-deno-otel-test",
          KAFKA_BROKERS: brokers,
          TOPIC: topic,
          RECORDS: String(N),
          BINDING: binding,
        });
        assert.equal(new Set(seen.map((s) => s.value)).size, N, "the child handled every record");
        assert.deepEqual(receiver.refused, [], "the receiver refused no request");
        const problems: string[] = [];
        for (const [value, producer] of producers) {
          const mine = receiver.spans.filter((s) => s.name === `process ${topic}` && s.scope === "offset-frontier" && s.traceId === producer.traceId);
          if (mine.length !== 1) {
            problems.push(`${value}: ${mine.length} process spans in its producer's trace (${receiver.spans.length} spans received)`);
            continue;
          }
          const span = mine[0];
          if (span.parentSpanId !== producer.spanId) problems.push(`${value}: its process span is not a child of its producer's span`);
          if (span.kind !== 5 /* CONSUMER */) problems.push(`${value}: kind ${span.kind}`);
          if (span.attributes["messaging.destination.name"] !== topic) problems.push(`${value}: messaging.destination.name ${span.attributes["messaging.destination.name"]}`);
          const work = receiver.spans.find((s) => s.name === `handler work ${value}`);
          if (work?.parentSpanId !== span.spanId || work.traceId !== producer.traceId) problems.push(`${value}: the handler's span does not nest under its process span`);
          const saw = seen.find((s) => s.value === value);
          if (saw?.spanId !== span.spanId) problems.push(`${value}: after an await the handler's active span was ${saw?.spanId ?? "none"}, not its process span`);
        }
        assert.deepEqual(problems, []);
      } finally {
        await receiver.close();
      }
    });
  });
}
