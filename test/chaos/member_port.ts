/**
 * What the chaos suite's members over a client-port binding share (member_confluent.ts,
 * member_platformatic.ts): the log, the SIGTERM handling, the group events logged from
 * what the binding reports to the runner, and the restart loop. member.ts (KafkaJS, through
 * the runtime adapters' `consume()`) has its own; the workload's handler and the orphan
 * check are member_kit.ts's, shared by all.
 *
 * Log lines as member.ts's, with these client events:
 * - `J … assignment partitions memberId` a new assignment: the whole set after the
 *   change (an incremental one counts as a new assignment id; memberId is `-`);
 * - `R … assignment` an orderly revoke begins;
 * - `X … assignment true lost` partitions were lost (a rejoin follows).
 *
 * @module
 */
import process from "node:process";
import { clearInterval } from "node:timers";
import type { ConsumerClient } from "../../core/mod.ts";
import type { TransactionalPort } from "../../core/consumer/port/transactions.ts";
import { tapClient } from "../kafka/tap_client.ts";
import { ParallelConsumer } from "../../core/mod.ts";
import { FsyncLog } from "./fsync_log.ts";
import type { MemberConfig } from "./member.ts";
import { exitWithParent, oneLine, recordAttempt, type WorkloadMessage, workloadHandler } from "./member_kit.ts";

/** What the handler reads of a record (both bindings' messages have it). */
export type PortMessage = WorkloadMessage;

/** The client's own log, as lines of the member's log (`CHAOS_CLIENT_LOG=error|warn|info|debug`). */
export interface ClientLog {
  /** The level asked for (1 error … 4 debug), `undefined` when none. */
  readonly level: number | undefined;
  /** Logs a client line at `level` (dropped above the level asked for). */
  line(level: "error" | "warn" | "info" | "debug", message: unknown, extra?: unknown): void;
}

const START_RETRY_MS = 180_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A client, or (exactly-once mode) a client and its transactional port. */
export type PortClient<M> = ConsumerClient<M> | { readonly client: ConsumerClient<M>; readonly port: TransactionalPort };

/**
 * Runs one member: `setup` once (it builds the client library's objects), then a client
 * from `makeClient` per start, until the consumer ends or SIGTERM.
 * @param setup given the config and the client log, returns the client factory
 */
export async function runPortMember<M extends PortMessage>(
  setup: (cfg: MemberConfig, clientLog: ClientLog) => Promise<() => PortClient<M>> | (() => PortClient<M>),
): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? "") as MemberConfig;
  const log = new FsyncLog(cfg.log);
  const who = `${cfg.member}\t${process.pid}`;
  let joins = 0;
  const assignment = (): string => `${cfg.member}.${joins}`;
  const event = (kind: string, ...fields: Array<string | number | boolean>): void =>
    log.note([kind, Date.now(), who, assignment(), ...fields].join("\t") + "\n");
  let terminated = false;
  const orphanCheck = exitWithParent(cfg.parent);
  process.once("SIGTERM", () => {
    terminated = true;
    event("T");
  });

  const levels: Record<string, number> = { error: 1, warn: 2, info: 3, debug: 4 };
  const asked = process.env.CHAOS_CLIENT_LOG;
  const level = asked !== undefined ? levels[asked] : undefined;
  const makeClient = await setup(cfg, {
    level,
    line: (at, message, extra) => {
      if ((levels[at] ?? 0) > (level ?? 0)) return;
      event("L", at, oneLine(`${String(message)} ${extra === undefined ? "" : JSON.stringify(extra)}`));
    },
  });

  /** Logs the client's group events (what member.ts logs from KafkaJS's). */
  const observed = (client: ConsumerClient<M>): ConsumerClient<M> => {
    const now = new Set<string>();
    return tapClient(client, {
      assigned: (partitions, incremental) => {
        if (!incremental) now.clear();
        for (const p of partitions) now.add(`${p.topic}-${p.partition}`);
        if (incremental && partitions.length === 0) return;
        joins++; // before the runner: records of it start under the new id
        event("J", [...now].sort().join(","), "-");
        process.stdout.write(`${JSON.stringify({ event: "joined", assignment: assignment(), partitions: now.size })}\n`);
      },
      revoking: (partitions) => {
        event("R");
        for (const p of partitions ?? []) now.delete(`${p.topic}-${p.partition}`);
      },
      lost: (partitions) => {
        event("X", true, "lost");
        if (partitions) for (const p of partitions) now.delete(`${p.topic}-${p.partition}`);
        else now.clear();
      },
    });
  };

  const one = recordAttempt<M>(cfg, log, who);

  const start = (): { consumer: ParallelConsumer<M>; started: Promise<void> } => {
    const made = makeClient();
    const client = "port" in made ? made.client : made;
    const consumer = new ParallelConsumer<M>(observed(client), {
      ...("port" in made ? { transactional: { timeoutMs: 5_000, port: made.port } } : {}),
      ordering: "key",
      concurrency: cfg.concurrency,
      retry: { retries: 3, initialDelayMs: 10, maxDelayMs: 200 },
      ...workloadHandler(cfg, one, assignment, event),
      on: {
        error: (e) => event("E", e.kind, oneLine(e.error)),
        commit: (e) => event("K", e.offsets.map((o) => `${o.partition}:${o.offset}`).join(",")),
        // Outages as the runner sees them (a join that fails, a fetch that does not answer).
        unavailable: (e) => event("U", e.attempts, e.sinceMs, oneLine(e.lastError)),
        available: () => event("A"),
      },
    });
    return { consumer, started: consumer.start() };
  };

  let failingSince: number | undefined;
  let state = "stopped";
  for (;;) {
    if (terminated) break;
    const attempt = start();
    const onTerm = (): void => void attempt.consumer.shutdown();
    process.once("SIGTERM", onTerm);
    try {
      await attempt.started;
    } catch (e) {
      process.off("SIGTERM", onTerm);
      event("S", oneLine(e));
      failingSince ??= Date.now();
      if (Date.now() - failingSince > START_RETRY_MS) throw e;
      await sleep(1_000);
      continue;
    }
    failingSince = undefined;
    if (terminated) void attempt.consumer.shutdown();
    try {
      await attempt.consumer.done;
      state = attempt.consumer.state;
      break;
    } catch (e) {
      event("C", oneLine(e));
      await attempt.consumer.shutdown().catch(() => {});
      await sleep(1_000);
    } finally {
      process.off("SIGTERM", onTerm);
    }
  }
  event("D", state);
  clearInterval(orphanCheck);
}

/** Runs `main`, printing a failure and exiting 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((e) => {
    process.stderr.write(`member: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    process.exit(1);
  });
}
