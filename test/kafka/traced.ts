/**
 * The producer's side of the real-broker tracing suites (not a test file): records produced
 * each from a span of its own, its context in the record's headers (W3C `traceparent` through
 * the globally registered propagator), and the span context a record's headers carry.
 */
import { context, propagation, ROOT_CONTEXT, type SpanContext, trace } from "@opentelemetry/api";
import { HEADER_GETTER } from "../../adapters/shared/tracing.ts";
import { kafka } from "./helpers.ts";

/** The span context `headers` carry (as the runner reads them: strings or bytes), if any. */
export const headerSpan = (headers: unknown): SpanContext | undefined => trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER));

/** Produces `n` records (keys k0..k29, values v0..), each from its own producer span; returns each value's trace id. */
export async function produceTraced(brokers: string, topic: string, n: number): Promise<Map<string, string>> {
  const traces = new Map<string, string>();
  const producer = kafka(brokers).producer();
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
