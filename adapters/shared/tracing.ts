/**
 * Tracing through OpenTelemetry, shared by every binding: the `tracing` option, on by
 * default when `@opentelemetry/api` (an optional peer dependency) can be imported. Each
 * handler attempt gets a span of its own following the messaging semantic conventions
 * (`process <topic>`, kind CONSUMER; `messaging.system` `kafka`, `messaging.operation.type`
 * and `.name` `process`, `messaging.destination.name`, `messaging.destination.partition.id`,
 * `messaging.kafka.offset`, `messaging.kafka.message.key` for a UTF-8 key,
 * `messaging.consumer.group.name`, `messaging.message.body.size`, and
 * `offset_frontier.attempt`). Its parent is the context the globally registered propagator
 * extracts from the record's headers (W3C `traceparent` with the SDK's defaults) on the root
 * context, never the context active when the runner started the record (with
 * `links: true`: a new root linked to it). The handler runs inside it; it ends when the
 * attempt ends (error status and the exception when it failed). A batch handler call gets
 * one span with a link per record.
 *
 * Without `@opentelemetry/api` installed tracing is off, silently, and by default also when
 * no context manager is registered (OpenTelemetry not set up: no SDK registered one): the
 * runner then runs exactly as with `tracing: false`. Given a `tracer`, it traces regardless.
 *
 * @module
 */
import type { Attributes, Context, Link, Span, Tracer } from "@opentelemetry/api";
import { describe, InvalidArgumentError } from "../../core/errors.ts";
import type { RecordTracing, TracedRecord, TraceSpan, TracingSource } from "../../core/consumer/port/mod.ts";

type Api = typeof import("@opentelemetry/api");

/**
 * The part of an OpenTelemetry `Tracer` the binding uses (any `Tracer` of
 * `@opentelemetry/api` 1.x is one; loose parameters so that its signature fits).
 */
export interface OpenTelemetryTracer {
  /** Starts a span. */
  startSpan(...args: never[]): unknown;
}

/** `tracing: { … }`: which tracer, and parents or links. */
export interface TracingOptions {
  /** The tracer that makes the spans. Default `trace.getTracer("offset-frontier")` (the global provider's). */
  tracer?: OpenTelemetryTracer;
  /**
   * `true`: each attempt's span is a new root with a link to the record's producer context,
   * instead of its child. Default `false`.
   */
  links?: boolean;
}

/**
 * A binding's `tracing` option: `true` or left out (the default) traces through the global
 * OpenTelemetry API when `@opentelemetry/api` is installed and set up (a context manager
 * registered, as every SDK setup does); `false` never traces; an object picks the tracer
 * (then it traces whenever the API imports) or links.
 */
export type TracingOption = boolean | TracingOptions;

/** A record as the bindings deliver it: headers, key and value (bytes or strings). */
export interface TracedMessage {
  /** Headers by name (KafkaJS: Buffer, string or arrays of them; platformatic: Buffer). */
  readonly headers?: unknown;
  /** The key. */
  readonly key?: Uint8Array | string | null;
  /** The value. */
  readonly value?: Uint8Array | string | null;
}

/**
 * The runner's `tracing` for a binding's `tracing` option: `undefined` for `false`, else a
 * loader that imports `@opentelemetry/api` at `start()` (not installed: tracing off).
 * @param option the binding's `tracing` option
 * @param group the consumer group's name, once known (for `messaging.consumer.group.name`)
 * @throws {InvalidArgumentError} for an option that is not a boolean or `{ tracer?, links? }`
 */
export function openTelemetryTracing<M extends TracedMessage>(
  option: TracingOption | undefined,
  group: () => string | undefined,
): TracingSource<M> | undefined {
  if (option === false) return undefined;
  if (option !== undefined && option !== true) {
    if (option === null || typeof option !== "object" || Array.isArray(option)) {
      throw new InvalidArgumentError(`tracing must be a boolean or { tracer?, links? }; got ${describe(option)}`);
    }
    for (const k of Object.keys(option)) {
      if (k !== "tracer" && k !== "links") throw new InvalidArgumentError(`options.tracing has an unknown option ${describe(k)}; known: tracer, links`);
    }
    if (option.tracer !== undefined && typeof (option.tracer as { startSpan?: unknown })?.startSpan !== "function") {
      throw new InvalidArgumentError(`tracing.tracer must be an OpenTelemetry Tracer; got ${describe(option.tracer)}`);
    }
    if (option.links !== undefined && typeof option.links !== "boolean") {
      throw new InvalidArgumentError(`tracing.links must be a boolean; got ${describe(option.links)}`);
    }
  }
  const o = option === true || option === undefined ? {} : option;
  return async () => {
    let api: Api;
    try {
      api = await import("@opentelemetry/api");
    } catch {
      return undefined; // not installed: tracing off (documented)
    }
    // By default only where OpenTelemetry is set up (any SDK setup registers a context manager): a
    // package that merely depends on the API costs nothing (records still start directly).
    if (o.tracer === undefined && !contextManaged(api)) return undefined;
    return new OpenTelemetryRecordTracing<M>(api, (o.tracer as Tracer | undefined) ?? api.trace.getTracer("offset-frontier"), o.links === true, group);
  };
}

/** Whether a context manager is registered globally (without one no context is ever active: nothing nests). */
function contextManaged(api: Api): boolean {
  const key = api.createContextKey("offset-frontier: context manager probe");
  return api.context.with(api.ROOT_CONTEXT.setValue(key, true), () => api.context.active().getValue(key) === true);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The length of `s` encoded as UTF-8 (a lone surrogate as U+FFFD, 3 bytes, as `TextEncoder`
 * writes it), without encoding it: `TextEncoder.encode(s).length` allocated the bytes of
 * every string value once per record (9 % of the CPU of bench/consumer_path.ts --tracing noop).
 */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a surrogate pair: 4 bytes for its 2 code units
      i++;
    } else n += 2;
  }
  return n;
}

/** A header value as text: bytes decoded as UTF-8 (undefined when not UTF-8), arrays element by element. */
function text(v: unknown): string | string[] | undefined {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) {
    try {
      return utf8.decode(v);
    } catch {
      return undefined;
    }
  }
  if (Array.isArray(v)) {
    const out: string[] = [];
    for (const e of v) {
      const t = text(e);
      if (typeof t === "string") out.push(t);
    }
    return out.length > 0 ? out : undefined;
  }
  return undefined;
}

/**
 * Reads a carrier's header names and values (OpenTelemetry's `TextMapGetter`, typed here
 * without `@opentelemetry/api`, an optional peer a user may not have: the declarations must not
 * import it).
 */
export interface HeaderGetter {
  /** The header names. */
  keys(carrier: unknown): string[];
  /** A header's value(s) as text. */
  get(carrier: unknown, key: string): undefined | string | string[];
}

/** Reads headers as every binding delivers them: a plain object (or a Map) of strings, bytes or arrays of them. */
export const HEADER_GETTER: HeaderGetter = {
  keys(carrier: unknown): string[] {
    if (carrier === null || typeof carrier !== "object") return [];
    if (carrier instanceof Map) return [...carrier.keys()].map((k) => (typeof k === "string" ? k : String(text(k))));
    return Object.keys(carrier);
  },
  get(carrier: unknown, key: string): undefined | string | string[] {
    if (carrier === null || typeof carrier !== "object") return undefined;
    if (carrier instanceof Map) {
      for (const [k, v] of carrier) if ((typeof k === "string" ? k : text(k)) === key) return text(v);
      return undefined;
    }
    return text((carrier as Record<string, unknown>)[key]);
  },
};

/** One attempt's (or batch call's) span and the context the handler runs in. */
class OpenTelemetrySpan implements TraceSpan {
  #ended = false;

  constructor(readonly api: Api, readonly span: Span, readonly context: Context) {}

  run<T>(fn: () => T): T {
    return this.api.context.with(this.context, fn);
  }

  event(name: string, attributes?: Readonly<Record<string, string | number | boolean>>): void {
    if (!this.#ended) this.span.addEvent(name, attributes as Attributes | undefined);
  }

  fail(error: unknown): void {
    if (this.#ended) return;
    this.span.recordException(error instanceof Error ? error : String(error));
    this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.end();
  }

  inject(headers: Record<string, string>): void {
    this.api.propagation.inject(this.context, headers);
  }
}

/** The runner's tracer over the OpenTelemetry API. */
class OpenTelemetryRecordTracing<M extends TracedMessage> implements RecordTracing<M> {
  constructor(
    readonly api: Api,
    readonly tracer: Tracer,
    readonly links: boolean,
    readonly group: () => string | undefined,
  ) {}

  /** The context the record's headers carry, on the root context (never the active one). */
  #extract(message: M): Context {
    const headers = message.headers;
    return headers == null ? this.api.ROOT_CONTEXT : this.api.propagation.extract(this.api.ROOT_CONTEXT, headers, HEADER_GETTER);
  }

  #attributes(r: TracedRecord<M>): Attributes {
    const a: Attributes = {
      "messaging.system": "kafka",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": r.topic,
      "messaging.destination.partition.id": String(r.partition),
      "messaging.kafka.offset": r.offset,
      "offset_frontier.attempt": r.attempt,
    };
    const group = this.group();
    if (group !== undefined) a["messaging.consumer.group.name"] = group;
    const key = r.message.key;
    if (key != null) {
      const k = text(key);
      if (typeof k === "string") a["messaging.kafka.message.key"] = k;
    }
    const value = r.message.value;
    if (value != null) a["messaging.message.body.size"] = typeof value === "string" ? utf8Length(value) : value.length;
    return a;
  }

  record(r: TracedRecord<M>): TraceSpan {
    const api = this.api;
    const parent = this.#extract(r.message);
    const name = `process ${r.topic}`;
    const attributes = this.#attributes(r);
    let span: Span;
    if (this.links) {
      const sc = api.trace.getSpanContext(parent);
      const links: Link[] = sc !== undefined && api.isSpanContextValid(sc) ? [{ context: sc }] : [];
      span = this.tracer.startSpan(name, { kind: api.SpanKind.CONSUMER, attributes, links, root: true }, api.ROOT_CONTEXT);
    } else {
      span = this.tracer.startSpan(name, { kind: api.SpanKind.CONSUMER, attributes }, parent);
    }
    return new OpenTelemetrySpan(api, span, api.trace.setSpan(parent, span));
  }

  batch(records: readonly TracedRecord<M>[]): TraceSpan {
    const api = this.api;
    const links: Link[] = [];
    let topic: string | undefined = records[0]?.topic;
    for (const r of records) {
      if (r.topic !== topic) topic = undefined;
      const sc = api.trace.getSpanContext(this.#extract(r.message));
      if (sc === undefined || !api.isSpanContextValid(sc)) continue;
      links.push({
        context: sc,
        attributes: {
          "messaging.destination.name": r.topic,
          "messaging.destination.partition.id": String(r.partition),
          "messaging.kafka.offset": r.offset,
          "offset_frontier.attempt": r.attempt,
        },
      });
    }
    const attributes: Attributes = {
      "messaging.system": "kafka",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.batch.message_count": records.length,
    };
    if (topic !== undefined) attributes["messaging.destination.name"] = topic;
    const group = this.group();
    if (group !== undefined) attributes["messaging.consumer.group.name"] = group;
    const span = this.tracer.startSpan(topic === undefined ? "process" : `process ${topic}`, {
      kind: api.SpanKind.CONSUMER,
      attributes,
      links,
      root: true,
    }, api.ROOT_CONTEXT);
    return new OpenTelemetrySpan(api, span, api.trace.setSpan(api.ROOT_CONTEXT, span));
  }
}
