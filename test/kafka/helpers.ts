/**
 * Shared helpers of the real-broker consumer tests (not a test file): unique names per
 * run, KafkaJS clients, polling.
 */
import process from "node:process";
import { Kafka, logLevel } from "kafkajs";

const RUN = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
let counter = 0;

/** A topic or group name unique to this run (KAFKA_BROKERS may point at a shared broker). */
export function unique(name: string): string {
  return `${name}-${RUN}-${counter++}`;
}

/** Which runtime runs the test. */
export function runtime(): "node" | "bun" | "deno" {
  const g = globalThis as Record<string, unknown>;
  return g.Deno ? "deno" : g.Bun ? "bun" : "node";
}

/** The command that runs the TypeScript file `path` on this runtime (a child process of the same runtime). */
export function runtimeCommand(path: string): [string, string[]] {
  const rt = runtime();
  if (rt === "deno") return [process.execPath, ["run", "--allow-all", path]];
  if (rt === "bun") return [process.execPath, [path]];
  return [process.execPath, ["--import", "tsx", path]];
}

/** A KafkaJS client, logging errors only (KAFKAJS_LOG=debug|info|warn for more). */
export function kafka(brokers: string): Kafka {
  const level = process.env.KAFKAJS_LOG;
  return new Kafka({
    clientId: `offset-frontier-test-${runtime()}`,
    brokers: brokers.split(",").map((b) => b.trim()).filter(Boolean),
    logLevel: level === "debug"
      ? logLevel.DEBUG
      : level === "info"
      ? logLevel.INFO
      : level === "warn"
      ? logLevel.WARN
      : logLevel.ERROR,
  });
}

/** Consumer settings for tests: short fetch waits so pauses and resumes take effect quickly. */
export function consumerConfig(groupId: string): {
  groupId: string;
  maxWaitTimeInMs: number;
  sessionTimeout: number;
  heartbeatInterval: number;
  retry: { retries: number };
} {
  return { groupId, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1_000, retry: { retries: 5 } };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 10 ms; rejects after `timeoutMs` naming `what`. */
export async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Sum of a Map's values read as numbers. */
export function total(m: Map<number, string | number>): number {
  let n = 0;
  for (const v of m.values()) n += Number(v);
  return n;
}

/** Compares two maps partition → offset as plain objects (string offsets). */
export function asObject(m: Map<number, string | number>): Record<string, string> {
  return Object.fromEntries([...m].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), String(v)]));
}
