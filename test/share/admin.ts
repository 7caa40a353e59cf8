/**
 * The share-group admin calls of the evaluation (test/share/ShareAdmin.java, run on the
 * broker's JVM classpath: no JavaScript client has them).
 *
 * @module
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

/** One partition of a share group's state: start offset (SPSO), lag (unacknowledged records) and log end. */
export interface SharePartitionState {
  partition: number;
  start: number;
  lag: number;
  end: number;
}

/** The broker's classpath (the newest one test/broker/broker.ts cached). */
function classpath(): string {
  const dir = join(ROOT, ".cache", "kafka");
  const f = readdirSync(dir).filter((n) => n.startsWith("classpath-")).sort((a, b) =>
    statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs
  )[0];
  return readFileSync(join(dir, f), "utf8").trim();
}

/** Runs one ShareAdmin command; its JSON line. */
export function shareAdmin(...cmd: string[]): Promise<Record<string, unknown>> {
  return new Promise((res, rej) => {
    const args = ["-XX:TieredStopAtLevel=1", "-cp", classpath(), join(HERE, "ShareAdmin.java"), ...cmd];
    execFile("java", args, { timeout: 60_000 }, (e, out, err) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (e || !line) rej(new Error(`ShareAdmin ${cmd[0]}: ${e?.message ?? ""} ${err.slice(-500)}`));
      else res(JSON.parse(line));
    });
  });
}

/** Sets group configs (`share.auto.offset.reset=earliest`, …) on `group`, existing or not. */
export async function setGroupConfig(brokers: string, group: string, configs: Record<string, string>): Promise<void> {
  await shareAdmin("config", brokers, group, ...Object.entries(configs).map(([k, v]) => `${k}=${v}`));
}

/** The share group's state of every partition of `topic`. */
export async function shareState(brokers: string, group: string, topic: string): Promise<SharePartitionState[]> {
  const o = await shareAdmin("offsets", brokers, group, topic) as { partitions: SharePartitionState[] };
  return o.partitions;
}
