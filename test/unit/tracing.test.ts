// Tracing through OpenTelemetry (adapters/shared/tracing.ts over the runner's tracing port)
// with the SDK's AsyncLocalStorage context manager and an in-memory client: every attempt
// runs in a span of its own record, a child of the record's `traceparent`, and never sees
// the context of the delivery, of another record, or of the completion that started it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { context, propagation, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InvalidArgumentError, type OutputRecord, ParallelConsumer, type TransactionalContext } from "../../core/mod.ts";
import { openTelemetryTracing, utf8Length } from "../../adapters/shared/tracing.ts";
import fc from "fast-check";
import { FOREIGN, type OtelSetup, producerSpan, setupOtel, spansNamed } from "./otel_setup.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";
import { MemoryPort } from "./memory_port.ts";

type TracedMsg = Msg & { headers?: Record<string, string> };

let otel: OtelSetup;
before(() => void (otel = setupOtel()));
after(() => otel.close());

const tracing = (option: Parameters<typeof openTelemetryTracing>[0] = true) => openTelemetryTracing<TracedMsg>(option, () => "g");

/**
 * Delivers `offsets` of t/`partition`, each record with its own producer span; returns those
 * spans by offset (also handed to `seen` before the delivery, whose records may start at once).
 */
function deliverTraced(
  client: MemoryClient,
  partition: number,
  offsets: number[],
  keyOf?: (o: number) => string,
  seen?: (offset: number, span: Span) => void,
): Map<number, Span> {
  const producers = new Map<number, Span>();
  const messages: TracedMsg[] = offsets.map((offset) => {
    const { span, headers } = producerSpan(`t/${partition}@${offset}`);
    producers.set(offset, span);
    seen?.(offset, span);
    return { offset, value: `t/${partition}@${offset}`, headers, ...(keyOf ? { key: keyOf(offset) } : {}) };
  });
  // As the KafkaJS instrumentation does: the delivery runs inside a `poll` span (ended at once) and a context of its own.
  const poll = trace.getTracer("test-instrumentation").startSpan("poll");
  const ctx = trace.setSpan(ROOT_CONTEXT, poll).setValue(FOREIGN, "the delivery");
  context.with(ctx, () => assert.ok(client.sink.deliver({ topic: "t", partition, messages, offsets, next: offsets[offsets.length - 1] + 1 })));
  poll.end();
  return producers;
}

const spanId = (s: Span | ReadableSpan): string => s.spanContext().spanId;

describe("tracing: each record in a span of its own", () => {
  test("300 records, key ordering, concurrency 16: every handler runs in its own record's span, never in another's, the delivery's or a completion's", async () => {
    otel.exporter.reset();
    const client = new MemoryClient();
    const problems: string[] = [];
    const producers = new Map<string, Span>();
    let calls = 0;
    const check = (m: TracedMsg, partition: number, offset: number, when: string): void => {
      const active = trace.getActiveSpan() as unknown as ReadableSpan | undefined;
      const foreign = context.active().getValue(FOREIGN);
      if (foreign !== undefined) problems.push(`${partition}@${offset} ${when}: runs in ${String(foreign)}'s context`);
      if (active === undefined) return void problems.push(`${partition}@${offset} ${when}: no active span`);
      if (active.name !== "process t" || active.attributes["messaging.kafka.offset"] !== offset ||
        active.attributes["messaging.destination.partition.id"] !== String(partition)) {
        return void problems.push(`${partition}@${offset} ${when}: in span ${active.name} of ${String(active.attributes["messaging.kafka.offset"])}`);
      }
      if (active.ended) problems.push(`${partition}@${offset} ${when}: its span already ended`);
      const producer = producers.get(`${partition}@${offset}`)!;
      if (active.parentSpanContext?.spanId !== spanId(producer) || active.spanContext().traceId !== producer.spanContext().traceId) {
        problems.push(`${partition}@${offset} ${when}: not a child of its producer span`);
      }
      if (m.offset !== offset) problems.push(`${partition}@${offset}: handed record ${m.offset}`);
    };
    const c = new ParallelConsumer<TracedMsg>(client, {
      engine: "js",
      ordering: "key",
      concurrency: 16,
      retry: { retries: 1, initialDelayMs: 1, maxDelayMs: 1 },
      tracing: tracing(),
      handler: (m, { partition, offset, attempt }) => {
        calls++;
        check(m, partition, offset, "at start");
        trace.getTracer("handler").startSpan("handler work").end(); // nests under the attempt's span
        if (offset % 50 === 7 && attempt === 1) throw new Error("first attempt fails");
        if (offset % 2 === 0) {
          return (async () => {
            await sleep(Math.random() * 3);
            check(m, partition, offset, "after an await");
          })();
        }
        // A completion from another context: what it starts next must not run in it.
        return {
          then(ok: () => void) {
            context.with(context.active().setValue(FOREIGN, `record ${partition}@${offset}`), () => setTimeout(ok, Math.random() * 3));
          },
        };
      },
    });
    await c.start();
    client.sink.assigned(range(0, 3).map((partition) => ({ topic: "t", partition })));
    for (let p = 0; p < 3; p++) {
      deliverTraced(client, p, range(0, 100), (o) => `k${o % 10}`, (o, s) => producers.set(`${p}@${o}`, s));
    }
    await until(() => c.metrics().completed === 300, 10_000, "300 completed");
    await c.shutdown();
    assert.deepEqual(problems, []);
    assert.equal(calls, 306, "300 records, 6 of them retried once");
    const processes = spansNamed(otel.exporter, "process t");
    assert.equal(processes.length, 306, "a span per attempt");
    const byId = new Map(processes.map((s) => [s.spanContext().spanId, s]));
    const work = spansNamed(otel.exporter, "handler work");
    assert.equal(work.length, 306);
    for (const w of work) assert.ok(byId.has(w.parentSpanContext!.spanId), "the handler's own span nests under its attempt's");
    const first = processes.find((s) => s.attributes["messaging.kafka.offset"] === 7 && s.attributes["offset_frontier.attempt"] === 1)!;
    assert.equal(first.status.code, SpanStatusCode.ERROR);
    assert.ok(first.events.some((e) => e.name === "exception"), "the exception is recorded");
    assert.ok(first.events.some((e) => e.name === "offset_frontier.retry"), "the retry is recorded");
    const second = processes.find((s) => s.attributes["messaging.kafka.offset"] === 7 && s.attributes["offset_frontier.attempt"] === 2 &&
      s.attributes["messaging.destination.partition.id"] === first.attributes["messaging.destination.partition.id"])!;
    assert.equal(second.status.code, SpanStatusCode.UNSET);
    assert.equal(second.parentSpanContext?.spanId, first.parentSpanContext?.spanId, "a retry is another child of the same producer span");
    const a = first.attributes;
    assert.equal(a["messaging.system"], "kafka");
    assert.equal(a["messaging.operation.type"], "process");
    assert.equal(a["messaging.destination.name"], "t");
    assert.equal(a["messaging.consumer.group.name"], "g");
    assert.equal(a["messaging.kafka.message.key"], "k7");
    assert.equal(a["messaging.message.body.size"], 5);
    assert.equal(first.kind, 4 /* SpanKind.CONSUMER */);
  });

  test("a dead letter is recorded on the last attempt's span and carries its context on", async () => {
    otel.exporter.reset();
    const client = new MemoryClient({ deadLetter: async () => {} });
    const c = new ParallelConsumer<TracedMsg>(client, {
      engine: "js",
      retry: { retries: 1, initialDelayMs: 1, maxDelayMs: 1, onExhausted: "dead-letter" },
      tracing: tracing(),
      handler: (m) => {
        if (m.offset === 3) throw new Error("always");
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    const producers = deliverTraced(client, 0, range(0, 5));
    await until(() => client.deadLetters.length === 1 && c.metrics().completed === 5, 2_000, "dead letter");
    await c.shutdown();
    const spans = spansNamed(otel.exporter, "process t").filter((s) => s.attributes["messaging.kafka.offset"] === 3);
    assert.deepEqual(spans.map((s) => s.attributes["offset_frontier.attempt"]), [1, 2]);
    const last = spans[1];
    assert.ok(last.events.some((e) => e.name === "offset_frontier.dead_letter"));
    assert.equal(last.status.code, SpanStatusCode.ERROR);
    assert.equal(last.parentSpanContext?.spanId, spanId(producers.get(3)!));
    const headers = client.deadLetters[0].info.headers!;
    const carried = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers))!;
    assert.equal(carried.spanId, last.spanContext().spanId, "the dead letter's traceparent is the last attempt's span");
  });

  test("a stuck record's abandonment is recorded on its attempt's span, and its dead letter carries that span's context", async () => {
    otel.exporter.reset();
    const client = new MemoryClient({ deadLetter: async () => {} });
    const c = new ParallelConsumer<TracedMsg>(client, {
      engine: "js",
      stuck: { maxPendingMs: 30, action: "dead-letter" },
      tracing: tracing(),
      handler: (m, { signal }) => m.offset === 1 ? new Promise<void>((r) => signal.addEventListener("abort", () => r())) : undefined,
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    deliverTraced(client, 0, range(0, 3));
    await until(() => client.deadLetters.length === 1 && c.metrics().completed === 3, 5_000, "the stuck record dead-lettered");
    await c.shutdown();
    const span = spansNamed(otel.exporter, "process t").find((s) => s.attributes["messaging.kafka.offset"] === 1)!;
    assert.ok(span.events.some((e) => e.name === "offset_frontier.stuck"), "the stuck event");
    assert.ok(span.events.some((e) => e.name === "offset_frontier.dead_letter"), "the dead-letter event");
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    const carried = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, client.deadLetters[0].info.headers!))!;
    assert.equal(carried.spanId, span.spanContext().spanId);
  });

  test("a batch handler call gets one span linked to each record; the handler runs in it", async () => {
    otel.exporter.reset();
    const client = new MemoryClient();
    const seen: string[] = [];
    const c = new ParallelConsumer<TracedMsg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 4,
      tracing: tracing(),
      batch: {
        maxRecords: 4,
        maxWaitMs: 1,
        handler: async (messages) => {
          const active = trace.getActiveSpan() as unknown as ReadableSpan;
          seen.push(`${active.name}:${active.links.length}:${messages.length}:${String(context.active().getValue(FOREIGN))}`);
          trace.getTracer("handler").startSpan("batch work").end();
          await sleep(1);
        },
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    const producers = deliverTraced(client, 0, range(0, 8));
    await until(() => c.metrics().completed === 8, 2_000, "8 completed");
    await c.shutdown();
    assert.deepEqual(seen, ["process t:4:4:undefined", "process t:4:4:undefined"]);
    const batches = spansNamed(otel.exporter, "process t");
    assert.equal(batches.length, 2);
    const linked = batches.flatMap((b) => b.links.map((l) => l.context.spanId)).sort();
    assert.deepEqual(linked, [...producers.values()].map(spanId).sort(), "one link per record, to its producer span");
    assert.equal(batches[0].attributes["messaging.batch.message_count"], 4);
    for (const w of spansNamed(otel.exporter, "batch work")) {
      assert.ok(batches.some((b) => b.spanContext().spanId === w.parentSpanContext?.spanId));
    }
  });

  test("exactly-once: an output carries the context of the attempt that sent it", async () => {
    otel.exporter.reset();
    const client = new MemoryClient();
    const port = new MemoryPort();
    const c = new ParallelConsumer<TracedMsg>(client, {
      engine: "js",
      transactional: { port },
      tracing: tracing(),
      handler: (m, ctx) => {
        (ctx as TransactionalContext).send({ topic: "out", value: m.value }, { topic: "out", value: "own", headers: { traceparent: "mine" } });
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    await until(() => port.opened.length === 1 && !client.paused.has("t/0"), 1_000, "opened");
    deliverTraced(client, 0, range(0, 3));
    await until(() => port.outputs.length === 6, 2_000, "outputs committed");
    await c.shutdown(100);
    const spans = spansNamed(otel.exporter, "process t");
    for (const o of port.outputs.filter((o: OutputRecord) => o.value !== "own")) {
      const offset = Number(String(o.value).split("@")[1]);
      const carried = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, o.headers))!;
      const span = spans.find((s) => s.attributes["messaging.kafka.offset"] === offset)!;
      assert.equal(carried.spanId, span.spanContext().spanId);
    }
    assert.ok(port.outputs.filter((o) => o.value === "own").every((o) => o.headers?.traceparent === "mine"), "headers a record sets itself win");
  });

  test("links: true makes each attempt a new root linked to its producer span; tracing: false makes no span", async () => {
    otel.exporter.reset();
    const client = new MemoryClient();
    const c = new ParallelConsumer<TracedMsg>(client, { engine: "js", tracing: tracing({ links: true }), handler: async () => {} });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    const producers = deliverTraced(client, 0, range(0, 3));
    await until(() => c.metrics().completed === 3, 2_000, "3 completed");
    await c.shutdown();
    const spans = spansNamed(otel.exporter, "process t");
    assert.equal(spans.length, 3);
    for (const s of spans) {
      assert.equal(s.parentSpanContext, undefined, "a root");
      assert.equal(s.links[0].context.spanId, spanId(producers.get(s.attributes["messaging.kafka.offset"] as number)!));
    }
    assert.equal(tracing(false), undefined);
    assert.throws(() => tracing({ link: true } as never), InvalidArgumentError);
    assert.throws(() => tracing("yes" as never), InvalidArgumentError);
    assert.throws(() => new ParallelConsumer<TracedMsg>(client, { tracing: 5 as never, handler: () => {} }), InvalidArgumentError);
  });

  test("by default, tracing is off where OpenTelemetry is not set up (no context manager registered)", async () => {
    context.disable();
    try {
      assert.equal(await (tracing() as () => Promise<unknown>)(), undefined);
      assert.notEqual(await (tracing({ tracer: trace.getTracer("given") }) as () => Promise<unknown>)(), undefined, "a given tracer traces regardless");
    } finally {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    }
    assert.notEqual(await (tracing() as () => Promise<unknown>)(), undefined);
  });

  test("messaging.message.body.size of a string value is its UTF-8 length, lone surrogates as U+FFFD (TextEncoder's count)", () => {
    const encoder = new TextEncoder();
    for (const v of ["", "x", "é", "€", "😀", "a\ud800", "\udc00b", "\ud800\ud800\udc00"]) assert.equal(utf8Length(v), encoder.encode(v).length, JSON.stringify(v));
    // Any UTF-16 code units: pairs, lone halves in either order, ASCII, two- and three-byte characters.
    const unit = fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0x80, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff }));
    fc.assert(fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
      const v = String.fromCharCode(...units);
      assert.equal(utf8Length(v), encoder.encode(v).length);
    }), { numRuns: 2_000 });
  });
});
