/**
 * Real broker: tracing. Records produced each from a span of its own (its context in the
 * record's `traceparent`), consumed through every binding of this runtime with the SDK's
 * AsyncLocalStorage context manager and, on Node, `@opentelemetry/instrumentation-kafkajs`
 * registered (it wraps KafkaJS's `eachBatch` in spans of its own, ended when `eachBatch`
 * returns): every handler runs in a span of its own record, a child of the context its
 * headers carry (in that record's trace), never in another record's span nor in an ended
 * one; the handler's own span nests under it; a retried record has a span per attempt; a
 * dead letter is an event on the last attempt's span and carries its context on; a batch
 * handler call's span links its records, one span per call; a stuck record's abandonment and
 * dead letter are events on its span, and its dead letter carries that span's context. Also, through each binding's own
 * factory: tracing is on by default (the span names the consumer group the binding found),
 * `tracing: false` makes no span, `tracing: { tracer, links: true }` makes the given tracer's
 * spans, new roots linked to the records' contexts.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`; uses
 * KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, test } from "node:test";
import { Kafka } from "kafkajs";
import { SpanKind, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { KafkaJsInstrumentation } from "@opentelemetry/instrumentation-kafkajs";
import { openTelemetryTracing, type TracingOption } from "../../adapters/shared/tracing.ts";
import { createTopic, endOffsets, withBroker } from "../broker/broker.ts";
import { setupOtel } from "../unit/otel_setup.ts";
import { bindings, confluentConfig, loadConfluent, platformaticRuns, type TestMessage } from "./bindings.ts";
import { kafka, runtime, sleep, total, unique, waitFor } from "./helpers.ts";
import { headerSpan, produceTraced, readDeadLetters } from "./traced.ts";

const otel = setupOtel();
// On Node, as a service with auto-instrumentation would: KafkaJS patched before any client is made.
const instrumented = runtime() === "node";
if (instrumented) {
  new KafkaJsInstrumentation();
  createRequire(import.meta.url)("kafkajs"); // its require hook patches the Kafka prototype everyone shares
  assert.equal((Kafka.prototype.consumer as { __wrapped?: boolean }).__wrapped, true, "the KafkaJS instrumentation is registered");
}
after(() => otel.close());

const ours = (s: ReadableSpan, topic: string): boolean => s.name === `process ${topic}` && s.instrumentationScope.name === "offset-frontier";

for (const binding of bindings()) test(`tracing (${binding.name}${instrumented ? ", KafkaJS instrumentation registered" : ""}): each handler in its own record's span, retries, dead letters`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("traced");
    const groupId = unique("traced-group");
    await createTopic(brokers, topic, 3);
    await createTopic(brokers, `${topic}.DLT`, 1);
    const traces = await produceTraced(brokers, topic, 300);
    assert.equal(total(await endOffsets(brokers, topic)), 300, "300 records produced");
    const retried = (v: string): boolean => Number(v.slice(1)) % 100 === 7; // fails its first attempt
    const dead = (v: string): boolean => Number(v.slice(1)) % 100 === 13; // always fails: dead-lettered
    const problems: string[] = [];
    let ok = 0, deadLetters = 0, calls = 0;
    const check = (m: TestMessage, partition: number, offset: number, when: string): void => {
      const v = m.value!.toString();
      const active = trace.getActiveSpan() as unknown as ReadableSpan | undefined;
      if (active === undefined) return void problems.push(`${v} ${when}: no active span`);
      if (!ours(active, topic) || active.attributes["messaging.kafka.offset"] !== offset ||
        active.attributes["messaging.destination.partition.id"] !== String(partition)) {
        return void problems.push(`${v} ${when}: in span ${active.name} (${active.instrumentationScope.name}) of offset ${String(active.attributes["messaging.kafka.offset"])}`);
      }
      if (active.ended) problems.push(`${v} ${when}: its span already ended`);
      const parent = headerSpan(m.headers);
      if (parent === undefined || active.parentSpanContext?.spanId !== parent.spanId) problems.push(`${v} ${when}: not a child of its headers' context`);
      if (active.spanContext().traceId !== traces.get(v)) problems.push(`${v} ${when}: not in its producer's trace`);
    };
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 16,
      retry: { retries: 1, initialDelayMs: 5, jitter: 0, onExhausted: "dead-letter" },
      deadLetter: true,
      tracing: openTelemetryTracing<TestMessage>(true, () => groupId),
      signal: controller.signal,
      on: { deadLetter: () => deadLetters++ },
      handler: async (message, { partition, offset, attempt }) => {
        calls++;
        const v = message.value!.toString();
        check(message, partition, offset, "at start");
        trace.getTracer("handler").startSpan(`handler work ${topic}/${v}`).end();
        await sleep(offset % 3);
        check(message, partition, offset, "after an await");
        if (dead(v) || (retried(v) && attempt === 1)) throw new Error(`cannot process ${v}`);
        ok++;
      },
    });
    await consumer.start();
    await waitFor(() => ok === 297 && deadLetters === 3, 60_000, "297 processed and 3 dead letters")
      .catch((e: Error) => Promise.reject(new Error(`${e.message}: ${ok} processed, ${deadLetters} dead letters, ${calls} calls; ${problems.slice(0, 3).join("; ")}`)));
    controller.abort();
    await consumer.done;
    assert.deepEqual(problems, []);

    const spans = otel.exporter.getFinishedSpans();
    const mine = spans.filter((s) => ours(s, topic));
    const byValue = new Map<string, ReadableSpan[]>();
    for (const s of spans) {
      const m = /^handler work ([^/]+)\/(v\d+)$/.exec(s.name);
      if (m?.[1] !== topic) continue;
      const v = m[2];
      const parent = mine.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);
      assert.ok(parent, `${v}: the handler's span nests under an attempt's span`);
      (byValue.get(v) ?? byValue.set(v, []).get(v)!).push(parent);
    }
    assert.equal(byValue.size, 300, "every record's handler span nests under its attempt");
    for (const [v, attempts] of byValue) {
      const n = dead(v) || retried(v) ? 2 : 1;
      assert.equal(attempts.length, n, `${v}: a span per attempt`);
      assert.deepEqual(attempts.map((s) => s.attributes["offset_frontier.attempt"]).sort(), n === 2 ? [1, 2] : [1]);
      for (const s of attempts) {
        assert.equal(s.kind, SpanKind.CONSUMER, `${v}: kind consumer`);
        assert.equal(s.attributes["messaging.system"], "kafka");
        assert.equal(s.attributes["messaging.operation.type"], "process");
        assert.equal(s.attributes["messaging.destination.name"], topic);
        assert.equal(s.attributes["messaging.consumer.group.name"], groupId);
        assert.equal(s.attributes["messaging.message.body.size"], v.length);
        assert.match(String(s.attributes["messaging.kafka.message.key"]), /^k\d+$/);
        const failed = dead(v) || (retried(v) && s.attributes["offset_frontier.attempt"] === 1);
        assert.equal(s.status.code === 2 /* ERROR */, failed, `${v}: error status exactly when the attempt failed`);
        assert.equal(s.events.some((e) => e.name === "exception"), failed, `${v}: the exception recorded exactly when the attempt failed`);
        const retriedAfter = s.attributes["offset_frontier.attempt"] === 1 && n === 2;
        assert.equal(s.events.some((e) => e.name === "offset_frontier.retry"), retriedAfter, `${v}: the retry recorded on the attempt it follows`);
      }
    }
    if (instrumented && binding.name === "kafkajs") {
      assert.ok(spans.some((s) => s.instrumentationScope.name.includes("kafkajs") && s.name.includes(topic)), "the instrumentation's own spans are there too");
    }

    // The dead letters carry the last attempt's context on (through the producer's own send span when instrumented).
    const letters = await readDeadLetters(brokers, topic, 3);
    const all = otel.exporter.getFinishedSpans();
    for (const { value, headers } of letters) {
      const last = byValue.get(value)!.find((s) => s.attributes["offset_frontier.attempt"] === 2)!;
      assert.ok(last.events.some((e) => e.name === "offset_frontier.dead_letter"), `${value}: the dead letter is an event on its last attempt's span`);
      const carried = headerSpan(headers)!;
      assert.equal(carried.traceId, traces.get(value), `${value}: the dead letter stays in its record's trace`);
      const via = all.find((s) => s.spanContext().spanId === carried.spanId);
      assert.ok(
        carried.spanId === last.spanContext().spanId || via?.parentSpanContext?.spanId === last.spanContext().spanId,
        `${value}: the dead letter's context is its last attempt's span (or a send span under it)`,
      );
    }
  });
});

for (const binding of bindings()) test(`tracing (${binding.name}): a batch handler call's span links each of its records`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("traced-batch");
    const groupId = unique("traced-batch-group");
    await createTopic(brokers, topic, 2);
    const traces = await produceTraced(brokers, topic, 60);
    const problems: string[] = [];
    const calls: Array<{ spanId: string; size: number }> = []; // each call's active span
    let done = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: 10,
      tracing: openTelemetryTracing<TestMessage>(true, () => groupId),
      signal: controller.signal,
      batch: {
        maxRecords: 10,
        maxWaitMs: 5,
        handler: async (messages) => {
          const active = trace.getActiveSpan() as unknown as ReadableSpan | undefined;
          if (active === undefined || !ours(active, topic)) return void problems.push(`batch of ${messages.length}: not in a batch span of ours`);
          calls.push({ spanId: active.spanContext().spanId, size: messages.length });
          const linked = active.links.map((l) => l.context.spanId).sort();
          const wanted = messages.map((m) => headerSpan(m.headers)?.spanId).sort();
          if (JSON.stringify(linked) !== JSON.stringify(wanted)) problems.push(`batch of ${messages.length}: links ${linked.length}, not its records'`);
          for (const m of messages) if (!active.links.some((l) => l.context.traceId === traces.get(m.value!.toString()))) problems.push(`${m.value}: no link into its trace`);
          await sleep(1);
          done += messages.length;
        },
      },
    });
    await consumer.start();
    await waitFor(() => done === 60, 60_000, `60 records in batches (${done})`);
    controller.abort();
    await consumer.done;
    assert.deepEqual(problems, []);
    // One span per call: no two calls share one, and each call's span is one batch span of its size.
    assert.equal(new Set(calls.map((c) => c.spanId)).size, calls.length, `${calls.length} calls, each in a span of its own`);
    const finished = otel.exporter.getFinishedSpans().filter((s) => ours(s, topic));
    assert.equal(finished.length, calls.length, "as many batch spans as calls");
    for (const c of calls) {
      const span = finished.find((s) => s.spanContext().spanId === c.spanId);
      assert.ok(span, "each call's span is among the finished batch spans");
      assert.equal(span.attributes["messaging.batch.message_count"], c.size, "the call's span counts its records");
      assert.equal(span.kind, SpanKind.CONSUMER);
    }
  });
});

for (const binding of bindings()) test(`tracing (${binding.name}): a stuck record's abandonment and dead letter are recorded on its span, and the dead letter carries its context`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("traced-stuck");
    const groupId = unique("traced-stuck-group");
    await createTopic(brokers, topic, 1);
    await createTopic(brokers, `${topic}.DLT`, 1);
    const traces = await produceTraced(brokers, topic, 20);
    let ok = 0, deadLetters = 0, hungIn: string | undefined;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "partition",
      deadLetter: true,
      stuck: { maxPendingMs: 500, action: "dead-letter" },
      tracing: openTelemetryTracing<TestMessage>(true, () => groupId),
      signal: controller.signal,
      on: { deadLetter: () => deadLetters++ },
      handler: async (message, { signal }) => {
        if (message.value!.toString() !== "v5") return void ok++;
        hungIn = trace.getActiveSpan()?.spanContext().spanId;
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })); // hangs until given up
      },
    });
    await consumer.start();
    await waitFor(() => ok === 19 && deadLetters === 1, 60_000, `19 processed and the stuck record dead-lettered (${ok}, ${deadLetters})`);
    const letters = await readDeadLetters(brokers, topic, 1);
    controller.abort();
    await consumer.done;

    const all = otel.exporter.getFinishedSpans();
    const span = all.find((s) => ours(s, topic) && s.spanContext().spanId === hungIn);
    assert.ok(span, "the stuck record's handler ran in a span of ours, ended once given up");
    assert.equal(span.spanContext().traceId, traces.get("v5"), "in its producer's trace");
    const stuckEvent = span.events.find((e) => e.name === "offset_frontier.stuck");
    assert.equal(stuckEvent?.attributes?.["offset_frontier.stuck.action"], "dead-letter", "the abandonment is an event on its span");
    assert.ok(span.events.some((e) => e.name === "offset_frontier.dead_letter"), "the dead letter is an event on its span");
    assert.equal(span.status.code, 2 /* ERROR */);
    assert.deepEqual(letters.map((l) => l.value), ["v5"]);
    const carried = headerSpan(letters[0].headers)!;
    assert.equal(carried.traceId, traces.get("v5"), "the dead letter stays in its record's trace");
    const via = all.find((s) => s.spanContext().spanId === carried.spanId);
    assert.ok(
      carried.spanId === span.spanContext().spanId || via?.parentSpanContext?.spanId === span.spanContext().spanId,
      "the dead letter's context is the stuck attempt's span (or a send span under it)",
    );
  });
});

/** A binding's own factory (createKafkaJSConsumer, createConfluentConsumer, createPlatformaticConsumer) over a topic and group. */
type Factory = {
  name: string;
  make(o: { topic: string; groupId: string; tracing?: TracingOption; handler: (m: { value: unknown; headers?: unknown }) => Promise<void>; signal: AbortSignal }): {
    start(): Promise<void>;
    done: Promise<void>;
  };
};

async function factories(brokers: string): Promise<Factory[]> {
  const { createKafkaJSConsumer } = await import("../../adapters/kafkajs/mod.ts");
  const out: Factory[] = [{
    name: "createKafkaJSConsumer",
    make: ({ topic, groupId, tracing, handler, signal }) =>
      createKafkaJSConsumer({ consumer: kafka(brokers).consumer({ groupId, maxWaitTimeInMs: 100 }), topics: [topic], fromBeginning: true, handler, signal, ...(tracing !== undefined ? { tracing } : {}) }),
  }];
  if (runtime() === "node" && bindings().some((b) => b.name === "confluent")) {
    const { createConfluentConsumer } = await import("../../adapters/confluent/mod.ts");
    const { KafkaJS } = loadConfluent();
    out.push({
      name: "createConfluentConsumer",
      make: ({ topic, groupId, tracing, handler, signal }) =>
        createConfluentConsumer({
          kafka: new KafkaJS.Kafka({ kafkaJS: { brokers: brokers.split(","), logLevel: KafkaJS.logLevel.ERROR } }),
          config: confluentConfig(groupId, "consumer"),
          topics: [topic],
          fromBeginning: true,
          handler,
          signal,
          ...(tracing !== undefined ? { tracing } : {}),
        }),
    });
  }
  if (platformaticRuns()) {
    const { createPlatformaticConsumer } = await import("../../adapters/platformatic/mod.ts");
    const { Consumer } = await import("@platformatic/kafka");
    out.push({
      name: "createPlatformaticConsumer",
      make: ({ topic, groupId, tracing, handler, signal }) =>
        createPlatformaticConsumer({
          consumer: new Consumer({ groupId, clientId: groupId, bootstrapBrokers: brokers.split(",") }),
          topics: [topic],
          fromBeginning: true,
          maxWaitTime: 100,
          handler,
          signal,
          ...(tracing !== undefined ? { tracing } : {}),
        }),
    });
  }
  return out;
}

/** Runs `factory` with `tracing` over 5 traced records until each was handled; returns the producers' traces, the group and what each handler saw active (after an await). */
async function runFactory(brokers: string, factory: Factory, tracing: TracingOption | undefined) {
  const topic = unique("traced-factory");
  const groupId = unique("traced-factory-group");
  await createTopic(brokers, topic, 1);
  const traces = await produceTraced(brokers, topic, 5);
  const seen: Array<{ value: string; headers: unknown; active: ReadableSpan | undefined }> = [];
  const controller = new AbortController();
  const c = factory.make({
    topic,
    groupId,
    ...(tracing !== undefined ? { tracing } : {}),
    signal: controller.signal,
    handler: async (m) => {
      await sleep(1);
      seen.push({ value: String(m.value), headers: m.headers, active: trace.getActiveSpan() as unknown as ReadableSpan | undefined });
    },
  });
  await c.start();
  await waitFor(() => seen.length === 5, 30_000, `${factory.name}: 5 records`);
  controller.abort();
  await c.done;
  return { topic, groupId, traces, seen };
}

test(`tracing through each binding's own factory (${runtime()}): on by default with the group's name, off with false, { tracer, links } makes linked roots with the given tracer`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const made = await factories(brokers);
    console.log(`factories on ${runtime()}: ${made.map((f) => f.name).join(", ")}`);
    for (const factory of made) {
      // Default: each handler in our span, in its record's trace, with the group's name the binding found itself.
      {
        const { topic, groupId, traces, seen } = await runFactory(brokers, factory, undefined);
        for (const { value, headers, active } of seen) {
          const where = `${factory.name} default, ${value}`;
          assert.ok(active !== undefined && ours(active, topic), `${where}: in a process span of ours`);
          assert.equal(active.spanContext().traceId, traces.get(value), `${where}: in its producer's trace`);
          assert.equal(active.parentSpanContext?.spanId, headerSpan(headers)?.spanId, `${where}: a child of its headers' context`);
          assert.equal(active.attributes["messaging.consumer.group.name"], groupId, `${where}: the consumer group's name`);
        }
      }
      // false: no span of ours, and the handler is not in one.
      {
        const { topic, seen } = await runFactory(brokers, factory, false);
        for (const { value, active } of seen) assert.ok(active === undefined || !ours(active, topic), `${factory.name} tracing: false, ${value}: in no span of ours`);
        assert.deepEqual(otel.exporter.getFinishedSpans().filter((s) => ours(s, topic)), [], `${factory.name} tracing: false: no span of ours`);
      }
      // { tracer, links: true }: the given tracer's spans (not the global provider's), new roots linked to the producers' contexts.
      {
        const exporter = new InMemorySpanExporter();
        const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
        try {
          const { topic, traces, seen } = await runFactory(brokers, factory, { tracer: provider.getTracer("offset-frontier"), links: true });
          assert.deepEqual(otel.exporter.getFinishedSpans().filter((s) => ours(s, topic)), [], `${factory.name} { tracer }: no span through the global provider`);
          const given = exporter.getFinishedSpans().filter((s) => ours(s, topic));
          assert.equal(given.length, 5, `${factory.name} { tracer }: a span per record through the given tracer`);
          for (const { value, headers, active } of seen) {
            const where = `${factory.name} { tracer, links }, ${value}`;
            const span = given.find((s) => s.spanContext().spanId === active?.spanContext().spanId);
            assert.ok(span, `${where}: the handler runs in the given tracer's span`);
            assert.equal(span.parentSpanContext, undefined, `${where}: a new root`);
            assert.notEqual(span.spanContext().traceId, traces.get(value), `${where}: a trace of its own`);
            assert.deepEqual(span.links.map((l) => l.context.spanId), [headerSpan(headers)?.spanId], `${where}: linked to its headers' context`);
            assert.equal(span.links[0].context.traceId, traces.get(value), `${where}: the link is into its producer's trace`);
          }
        } finally {
          await provider.shutdown();
        }
      }
    }
  });
});
