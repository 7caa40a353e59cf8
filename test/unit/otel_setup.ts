/**
 * OpenTelemetry as a service sets it up (not a test file): the SDK's AsyncLocalStorage
 * context manager, the W3C trace-context propagator and a tracer provider exporting to
 * memory, registered globally; plus a producer's side (a span per record, its context
 * injected into the record's headers). Used by the unit and real-broker tracing tests.
 */
import { context, createContextKey, propagation, type Span, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** The globally registered SDK: its exporter, and a function that unregisters it. */
export interface OtelSetup {
  readonly exporter: InMemorySpanExporter;
  readonly provider: BasicTracerProvider;
  /** Unregisters the globals and shuts the provider down. */
  close(): Promise<void>;
}

/** Registers the SDK globally (context manager, propagator, tracer provider). */
export function setupOtel(): OtelSetup {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    provider,
    async close() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** A context value a test sets around deliveries and completions: a handler must never see it. */
export const FOREIGN = createContextKey("offset-frontier test: foreign context");

/** A producer span for one record and the headers that carry its context (W3C `traceparent`). */
export function producerSpan(name: string): { span: Span; headers: Record<string, string> } {
  const span = trace.getTracer("test-producer").startSpan(`send ${name}`, { root: true });
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  span.end();
  return { span, headers };
}

/** The finished spans named `name`. */
export function spansNamed(exporter: InMemorySpanExporter, name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}
