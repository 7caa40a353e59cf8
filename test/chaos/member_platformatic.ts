/**
 * One member of the chaos suite's consumer group through the `@platformatic/kafka` binding
 * (`--client platformatic`: Bun, Deno, and Node >= 22.22, where harness.ts runs it on the
 * pinned Node 24 of scripts/install-node.mjs). The workload, the handler, the log and the
 * restart loop are member_port.ts's. Session 6 s and heartbeat 0.5 s, as member.ts's KafkaJS
 * members: a SIGKILLed member's partitions move after about 6 s. PLATFORMATIC_PROTOCOL
 * (`eager`, the default, or `cooperative`), set by run.ts's `--protocol`, picks the assignor.
 *
 * @module
 */
import process from "node:process";
import { Consumer, Producer } from "@platformatic/kafka";
import { PlatformaticClient, type PlatformaticMessage, PlatformaticTransactions } from "../../adapters/platformatic/mod.ts";
import { transactionalDeadLetter } from "../../adapters/platformatic/dead_letter.ts";
import type { ClientConsumer } from "../../adapters/platformatic/types.ts";
import { runMain, runPortMember } from "./member_port.ts";

runMain(() =>
  runPortMember<PlatformaticMessage>((cfg, clientLog) => {
    const bootstrapBrokers = [cfg.brokers];
    return () => {
      const clientId = `chaos-${cfg.member}-${process.pid}`;
      const consumer = new Consumer({
        groupId: cfg.group,
        clientId,
        bootstrapBrokers,
        sessionTimeout: 6_000,
        heartbeatInterval: 500,
        rebalanceTimeout: 15_000,
        // --protocol cooperative (run.ts sets PLATFORMATIC_PROTOCOL): the cooperative-sticky assignor
        ...(process.env.PLATFORMATIC_PROTOCOL === "cooperative" ? { protocols: [{ name: "cooperative-sticky", version: 3 }] } : {}),
      });
      if ((clientLog.level ?? 0) >= 4) {
        // CHAOS_CLIENT_LOG=debug: the client's group events and its own retries (operation, attempt, retries, delay).
        for (const ev of ["consumer:group:join", "consumer:group:rebalance", "consumer:rejoin", "consumer:heartbeat:error", "client:performWithRetry:retry", "error"]) {
          consumer.on(ev as never, ((...args: unknown[]) => clientLog.line("debug", ev, args.map((a) => (a instanceof Error ? a.message : typeof a === "object" ? undefined : a)))) as never);
        }
      }
      if (cfg.mode === "exactly-once") {
        // As createPlatformaticConsumer does (member.ts's settings): the port fences, reads and seeks; dead letters in the transactions.
        const client = new PlatformaticClient(consumer, [cfg.topic], { fromBeginning: true, maxWaitTime: 100, transactional: true });
        const port = new PlatformaticTransactions({
          consumer: consumer as unknown as ClientConsumer,
          membership: () => client.membership(),
          seek: (positions, unknownOnly) => client.seek(positions, unknownOnly),
          fromBeginning: true,
          deadLetter: transactionalDeadLetter({ producer: new Producer({ clientId: `${clientId}-dlq`, bootstrapBrokers }) }),
          // An open tried again (the port retries until the partitions end): a client log line.
          openFailed: (error, partitions) => clientLog.line("warn", "transactional open failed", { partitions: partitions.map((p) => p.partition).join(","), error: error instanceof Error ? error.message : String(error) }),
        }, { transactionTimeoutMs: 20_000 });
        return { client, port };
      }
      return new PlatformaticClient(consumer, [cfg.topic], {
        fromBeginning: true,
        maxWaitTime: 100,
        deadLetter: { producer: new Producer({ clientId: `${clientId}-dlq`, bootstrapBrokers }) },
      });
    };
  })
);
