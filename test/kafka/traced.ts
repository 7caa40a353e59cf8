/**
 * The producer's side of the real-broker tracing suites (not a test file): records produced
 * each from a span of its own, its context in the record's headers (W3C `traceparent` through
 * the globally registered propagator), the span context a record's headers carry, and the
 * dead letters a traced run wrote.
 */
import { context, propagation, ROOT_CONTEXT, type SpanContext, trace } from "@opentelemetry/api";
import { HEADER_GETTER } from "../../adapters/shared/tracing.ts";
import { kafka, unique, waitFor } from "./helpers.ts";

/** The span context `headers` carry (as the runner reads them: strings or bytes), if any. */
export const headerSpan = (headers: unknown): SpanContext | undefined => trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER));

/** Produces `n` records (keys k0..k29, values v0..), each from its own producer span; returns each value's trace id. */
export async function produceTraced(brokers: string, topic: string, n: number): Promise<Map<string, string>> {
  const traces = new Map<string, string>();
  // Idempotent: a send retried on a topic whose leader is not ready yet is written once (each value once).
  const producer = kafka(brokers).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await Promise.all(Array.from({ length: n }, (_, i) => {
      const span = trace.getTracer("test-producer").startSpan(`produce v${i}`, { root: true });
      traces.set(`v${i}`, span.spanContext().traceId);
      const headers: Record<string, string> = {};
      const ctx = trace.setSpan(ROOT_CONTEXT, span);
      propagation.inject(ctx, headers);
      // Inside the span: an instrumented producer's own send span nests under it (and its context goes in the headers).
      return context.with(ctx, () => producer.send({ topic, acks: -1, messages: [{ key: `k${i % 30}`, value: `v${i}`, headers }] })).finally(() => span.end());
    }));
  } finally {
    await producer.disconnect();
  }
  return traces;
}

/** Reads `topic`'s dead-letter topic (`<topic>.DLT`) from the start until it holds `count` letters; their values and headers. */
export async function readDeadLetters(brokers: string, topic: string, count: number): Promise<Array<{ value: string; headers: unknown }>> {
  const reader = kafka(brokers).consumer({ groupId: unique(`${topic}-dlt-reader`), maxWaitTimeInMs: 100 });
  const letters: Array<{ value: string; headers: unknown }> = [];
  await reader.connect();
  try {
    await reader.subscribe({ topics: [`${topic}.DLT`], fromBeginning: true });
    await reader.run({ eachMessage: ({ message }) => Promise.resolve(void letters.push({ value: message.value!.toString(), headers: message.headers })) });
    await waitFor(() => letters.length >= count, 30_000, `${count} dead letter(s) in ${topic}.DLT (${letters.length})`);
  } finally {
    await reader.disconnect();
  }
  return letters;
}
