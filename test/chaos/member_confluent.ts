/**
 * One member of the chaos suite's consumer group through the Confluent binding
 * (`--client confluent`, Node only; spawned by test/chaos/harness.ts as
 * `node --import tsx member_confluent.ts '<MemberConfig as JSON>'`). The workload, the
 * handler, the log and the restart loop are member_port.ts's; the group protocol comes from
 * CONFLUENT_PROTOCOL (`eager`, `cooperative` or `consumer`, default `consumer`), set by
 * run.ts's `--protocol`.
 *
 * @module
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import process from "node:process";
import { ConfluentClient, type ConfluentKafka, type ConfluentMessage, type ConfluentProducer } from "../../adapters/confluent/mod.ts";
import { CONFLUENT_PREFIX } from "../../scripts/install-confluent.mjs";
import { confluentConfig, type ConfluentProtocol } from "../kafka/bindings.ts";
import { runMain, runPortMember } from "./member_port.ts";

interface KafkaJSNamespace {
  Kafka: new (config: { kafkaJS: { brokers: string[]; logLevel?: number; clientId?: string; logger?: unknown } }) => ConfluentKafka & {
    producer(config?: Record<string, unknown>): ConfluentProducer;
  };
  logLevel: { NOTHING: number };
}

runMain(() =>
  runPortMember<ConfluentMessage>((cfg, clientLog) => {
    const protocol = (process.env.CONFLUENT_PROTOCOL as ConfluentProtocol | undefined) ?? "consumer";
    const { KafkaJS } = createRequire(join(CONFLUENT_PREFIX, "node_modules", "x.js"))("@confluentinc/kafka-javascript") as {
      KafkaJS: KafkaJSNamespace;
    };
    const at = (level: "error" | "warn" | "info" | "debug") => (message: unknown, extra?: unknown): void => clientLog.line(level, message, extra);
    const logger = clientLog.level === undefined ? undefined : {
      error: at("error"),
      warn: at("warn"),
      info: at("info"),
      debug: at("debug"),
      setLogLevel: () => {},
      namespace: () => logger,
    };
    const kafka = new KafkaJS.Kafka({
      kafkaJS: {
        brokers: [cfg.brokers],
        clientId: `chaos-${cfg.member}-${process.pid}`,
        logLevel: clientLog.level ?? KafkaJS.logLevel.NOTHING,
        ...(logger !== undefined ? { logger } : {}),
      },
    });
    const config = confluentConfig(cfg.group, protocol);
    if (protocol !== "consumer") config["session.timeout.ms"] = 6_000; // like member.ts: a SIGKILLed member's partitions move after ~6 s
    if (protocol !== "consumer") config["heartbeat.interval.ms"] = 500;
    config["max.poll.interval.ms"] = 15_000;
    return () =>
      new ConfluentClient(kafka, config, [cfg.topic], {
        fromBeginning: true,
        deadLetter: { producer: kafka.producer() },
        revokeTimeoutMs: 10_000,
      });
  })
);
