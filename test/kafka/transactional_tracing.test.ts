/**
 * Real broker: exactly-once outputs carry their record's trace. Records produced each from a
 * span of its own (its context in the record's `traceparent`) are consumed in exactly-once mode
 * (`transactional`) with the SDK's AsyncLocalStorage context manager; each handler attempt
 * sends one output, and a few records fail their first attempt (that attempt's output is
 * dropped with it). Read back with `read_committed`, every output carries a `traceparent`
 * in its input record's trace whose span is the `process <topic>` span of the attempt that
 * sent it, a child of the input's producer span: the trace goes from the producer through the
 * handler into what the transaction committed. A few records fail every attempt: their dead
 * letters, committed in the transactions, carry the context of their last attempt's span, on
 * which the dead letter is an event.
 *
 * Through every binding of this runtime that has a transactional port (KafkaJS and
 * `@platformatic/kafka`; Confluent's binding has none). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { trace } from "@opentelemetry/api";
import { openTelemetryTracing } from "../../adapters/shared/tracing.ts";
import { committedOffsets, createTopic, endOffsets, withBroker } from "../broker/broker.ts";
import { setupOtel } from "../unit/otel_setup.ts";
import { bindingsExcept, type TestMessage } from "./bindings.ts";
import { asObject, sleep, unique, waitFor } from "./helpers.ts";
import { readCommitted } from "./read_committed.ts";
import { headerSpan, produceTraced } from "./traced.ts";

const otel = setupOtel();
after(() => otel.close());

// Confluent's binding has no transactional port (exactly-once runs through KafkaJS and @platformatic/kafka).
for (const binding of bindingsExcept("confluent")) test(`exactly-once with tracing (${binding.name}): each committed output carries the context of the attempt that sent it`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("eos-traced");
    const groupId = unique("eos-traced-group");
    await createTopic(brokers, topic, 3);
    await createTopic(brokers, `${topic}.out`, 3);
    await createTopic(brokers, `${topic}.DLT`, 1);
    const N = 90;
    const traces = await produceTraced(brokers, topic, N);
    const ends = asObject(await endOffsets(brokers, topic));
    const retried = (v: string): boolean => Number(v.slice(1)) % 30 === 7; // fails its first attempt
    const dead = (v: string): boolean => Number(v.slice(1)) % 30 === 13; // fails both: a dead letter in the transaction
    const attemptSpans = new Map<string, string>(); // "v12#1" → the span id its handler ran in
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
      transactional: { timeoutMs: 15_000 },
      tracing: openTelemetryTracing<TestMessage>(true, () => groupId),
      signal: controller.signal,
      handler: async (message, { offset, attempt, send }) => {
        const v = message.value!.toString();
        attemptSpans.set(`${v}#${attempt}`, trace.getActiveSpan()?.spanContext().spanId ?? "no active span");
        send!({ topic: `${topic}.out`, key: message.key, value: `${v}#${attempt}`, headers: { from: v } });
        await sleep(offset % 3); // out of order
        if (dead(v) || (retried(v) && attempt === 1)) throw new Error(`fails ${v}`);
      },
    });
    await consumer.start();
    await waitFor(() => consumer.metrics().completed === N, 60_000, `${N} completed (${consumer.metrics().completed})`);
    const t0 = Date.now();
    while (JSON.stringify(asObject(await committedOffsets(brokers, groupId, topic))) !== JSON.stringify(ends)) {
      if (Date.now() - t0 > 30_000) assert.fail("the transactions did not commit every offset within 30 s");
      await sleep(200);
    }
    controller.abort();
    await consumer.done;

    const out = await readCommitted(brokers, `${topic}.out`);
    assert.equal(out.length, N - 3, "one committed output per input but the dead letters' (their failed attempts' outputs are dropped)");
    const finished = new Map(otel.exporter.getFinishedSpans().map((s) => [s.spanContext().spanId, s]));
    const problems: string[] = [];
    for (const r of out) {
      const from = r.headers.from;
      const carried = headerSpan(r.headers);
      if (carried === undefined) {
        problems.push(`${r.value}: no trace context in its headers (${Object.keys(r.headers).join(", ")})`);
        continue;
      }
      if (carried.traceId !== traces.get(from)) problems.push(`${r.value}: not in its input's trace`);
      if (carried.spanId !== attemptSpans.get(r.value)) problems.push(`${r.value}: not the span of the attempt that sent it`);
      const span = finished.get(carried.spanId);
      if (span?.name !== `process ${topic}` || span.instrumentationScope.name !== "offset-frontier") {
        problems.push(`${r.value}: its span is ${span ? `${span.name} (${span.instrumentationScope.name})` : "not one of this process's"}`);
      } else if (span.attributes["offset_frontier.attempt"] !== Number(r.value.split("#")[1])) problems.push(`${r.value}: the span of another attempt`);
    }
    assert.deepEqual(problems, []);
    assert.equal(out.filter((r) => r.value.endsWith("#2")).length, 3, "the retried records' outputs come from their second attempt");

    // The dead letters, committed in the transactions, carry the context of the last attempt's span, which records them.
    const letters = await readCommitted(brokers, `${topic}.DLT`);
    assert.deepEqual(letters.map((r) => r.value).sort(), [...traces.keys()].filter(dead).sort(), "the dead letters");
    for (const r of letters) {
      const carried = headerSpan(r.headers);
      assert.ok(carried, `dead letter ${r.value}: a trace context in its headers (${Object.keys(r.headers).join(", ")})`);
      assert.equal(carried.traceId, traces.get(r.value), `dead letter ${r.value}: in its record's trace`);
      assert.equal(carried.spanId, attemptSpans.get(`${r.value}#2`), `dead letter ${r.value}: the span of its last attempt`);
      const span = finished.get(carried.spanId);
      assert.ok(span?.events.some((e) => e.name === "offset_frontier.dead_letter"), `dead letter ${r.value}: an event on that span`);
    }
  });
});
