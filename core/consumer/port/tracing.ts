/**
 * The tracing port: what the runner calls around each handler attempt and each batch
 * handler call, so that a tracer (adapters/shared/tracing.ts: OpenTelemetry) can give every
 * attempt a span of its own, run the handler inside it, and end it when the attempt ends.
 * The runner never looks at contexts itself; absent (`tracing` not given, or the binding
 * found no `@opentelemetry/api`), none of this runs.
 *
 * A handler runs only inside {@link TraceSpan.run} of its own span: whatever context the
 * runner happened to be in when it started the record (a delivery's, a completion's, a
 * timer's) is never the handler's.
 *
 * @module
 */
import { describe, InvalidArgumentError } from "../../errors.ts";

/** A record as the tracer sees it (a `Work` is one). */
export interface TracedRecord<M> {
  /** The client's record (the tracer reads its headers, key and value). */
  readonly message: M;
  /** Topic of the record. */
  readonly topic: string;
  /** Partition of the record. */
  readonly partition: number;
  /** Offset of the record. */
  readonly offset: number;
  /** The attempt (1 for the first call, 2 for the first retry, …). */
  readonly attempt: number;
}

/** The span of one attempt (or one batch handler call). Every method may be called after {@link end}: it then does nothing. */
export interface TraceSpan {
  /** Runs `fn` (the handler call) with this span's context active; returns what `fn` returned. */
  run<T>(fn: () => T): T;
  /** Records a named event (a retry scheduled, a dead letter, a stuck record). */
  event(name: string, attributes?: Readonly<Record<string, string | number | boolean>>): void;
  /** The attempt failed with `error`: error status and the exception recorded. */
  fail(error: unknown): void;
  /** Ends the span (once; later calls do nothing). */
  end(): void;
  /** Writes this span's context into `headers` (e.g. W3C `traceparent`), for a record produced on its behalf. */
  inject(headers: Record<string, string>): void;
}

/** What the runner calls: the tracer of a consumer. */
export interface RecordTracing<M> {
  /** Starts the span of one attempt of `record` (its parent: what the record's headers say, never the active context). */
  record(record: TracedRecord<M>): TraceSpan;
  /** Starts the span of one batch handler call over `records` (linked to each record's context). */
  batch(records: readonly TracedRecord<M>[]): TraceSpan;
}

/**
 * `tracing` as the runner takes it: the tracer, or a function that loads it once at
 * `start()` (a binding's dynamic import of `@opentelemetry/api`; `undefined`: tracing off).
 */
export type TracingSource<M> = RecordTracing<M> | (() => Promise<RecordTracing<M> | undefined>);

/**
 * Checks a `tracing` option; returns it.
 * @throws {InvalidArgumentError} when it is neither a tracer, a function nor `undefined`
 */
export function checkTracing<M>(source: TracingSource<M> | undefined): TracingSource<M> | undefined {
  if (source === undefined || typeof source === "function") return source;
  if (source === null || typeof source !== "object" || typeof source.record !== "function" || typeof source.batch !== "function") {
    throw new InvalidArgumentError(`tracing must be a RecordTracing ({ record, batch }) or a function that loads one; got ${describe(source)}`);
  }
  return source;
}

/**
 * The tracer of a `tracing` option: loaded now if it is a function (`undefined`: none).
 * @throws {InvalidArgumentError} when `source` is neither a tracer nor a function
 */
export async function loadTracing<M>(source: TracingSource<M> | undefined): Promise<RecordTracing<M> | undefined> {
  if (source === undefined) return undefined;
  const t = typeof source === "function" ? await source() : source;
  if (t !== undefined && (t === null || typeof t.record !== "function" || typeof t.batch !== "function")) {
    throw new InvalidArgumentError(`tracing must be a RecordTracing ({ record, batch }) or a function that loads one; got ${describe(t)}`);
  }
  return t;
}

/** The headers `span` carries on, as a fresh record (empty when the tracer writes none). */
export function traceHeaders(span: TraceSpan): Record<string, string> {
  const headers: Record<string, string> = {};
  span.inject(headers);
  return headers;
}

/**
 * `record` carrying `span`'s context in its headers (an output sent by the handler, a
 * dead letter in a transaction); headers the record sets itself win. Unchanged when the
 * tracer writes none.
 */
export function tracedOutput<R extends { readonly headers?: Readonly<Record<string, string | Uint8Array>> }>(record: R, span: TraceSpan): R {
  const headers = traceHeaders(span);
  for (const _ in headers) return { ...record, headers: { ...headers, ...record.headers } };
  return record;
}
