/**
 * A small OTLP/HTTP trace receiver for the tests that send spans out of a process (not a test
 * file): `POST /v1/traces` with an `ExportTraceServiceRequest` in OTLP's JSON encoding
 * (`application/json`: what `@opentelemetry/exporter-trace-otlp-http` sends, and Deno's
 * built-in exporter with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), answered as a collector
 * does (200, an empty `ExportTraceServiceResponse`); logs and metrics are taken and dropped
 * (Deno's built-in OpenTelemetry sends them too). Anything else is answered 415 or 404 and
 * counted in {@link OtlpReceiver.refused}: a test sees it instead of a silent loss.
 */
import { Buffer } from "node:buffer";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as it arrived. */
export interface ReceivedSpan {
  /** Hex trace id. */
  traceId: string;
  /** Hex span id. */
  spanId: string;
  /** Hex parent span id ("" for a root). */
  parentSpanId: string;
  name: string;
  /** The instrumentation scope's name. */
  scope: string;
  /** OTLP span kind (1 internal, 2 server, 3 client, 4 producer, 5 consumer). */
  kind: number;
  /** Attributes by key (string, int, double or bool values). */
  attributes: Record<string, string | number | boolean>;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly url: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** Requests refused (wrong path, method or content type), described. */
  readonly refused: string[];
  /** Stops listening. */
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

function value(v: AnyValue | undefined): string | number | boolean {
  if (v === undefined) return "";
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return JSON.stringify(v);
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: Array<{ key: string; value?: AnyValue }>;
}

interface JsonRequest {
  resourceSpans?: Array<{ scopeSpans?: Array<{ scope?: { name?: string }; spans?: JsonSpan[] }> }>;
}

/** The spans of an `ExportTraceServiceRequest` in OTLP's JSON encoding (ids in hex). */
export function spansOf(request: JsonRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, string | number | boolean> = {};
        for (const a of s.attributes ?? []) attributes[a.key] = value(a.value);
        out.push({
          traceId: s.traceId.toLowerCase(),
          spanId: s.spanId.toLowerCase(),
          parentSpanId: (s.parentSpanId ?? "").toLowerCase(),
          name: s.name,
          scope: ss.scope?.name ?? "",
          kind: s.kind ?? 0,
          attributes,
        });
      }
    }
  }
  return out;
}

/** Starts a receiver on a free port of 127.0.0.1. */
export function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const type = String(req.headers["content-type"] ?? "");
      if (req.method === "POST" && (req.url === "/v1/logs" || req.url === "/v1/metrics")) {
        return void res.writeHead(200, { "content-type": "application/json" }).end("{}"); // taken and dropped (Deno sends both)
      }
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        refused.push(`${req.method} ${req.url} (${type})`);
        return void res.writeHead(404).end();
      }
      if (!type.startsWith("application/json")) {
        refused.push(`POST /v1/traces as ${type}: not JSON`);
        return void res.writeHead(415).end();
      }
      try {
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8")) as JsonRequest));
      } catch (e) {
        refused.push(`POST /v1/traces: ${e instanceof Error ? e.message : String(e)}`);
        return void res.writeHead(400).end();
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        refused,
        close: () => new Promise<void>((r) => server.close(() => r())),
      })
    )
  );
}

/** A W3C `traceparent` of a fresh, sampled producer context: its trace and span ids. */
export function randomTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const hex = (bytes: number): string => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16), spanId = hex(8);
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}
