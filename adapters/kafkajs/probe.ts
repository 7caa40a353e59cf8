/**
 * One direct connection attempt to each of a KafkaJS client's seed brokers, outside
 * KafkaJS's own retries: what a consumer that gives up before KafkaJS reported anything
 * names as the brokers and the cause (KafkaJS reports a failed connect only after its
 * retries, about 10 s by default, and exposes no attempt before that).
 *
 * It goes through KafkaJS's own connection (its socket factory, TLS and timeouts), built
 * from the client's private cluster factory: KafkaJS 2.2.x keeps the seed broker list
 * there and nowhere public.
 *
 * @module
 */
import type { ProbeResult } from "../../core/consumer/port/mod.ts";
import type { Kafka } from "./types.ts";

/** The parts of KafkaJS 2.2.x's private cluster and connection pool the probe uses. */
interface ConnectionPool {
  host: string;
  port: number;
  getConnection(): Promise<unknown>;
  destroy(): Promise<unknown>;
}
interface Cluster {
  connectionPoolBuilder?: { build(): Promise<ConnectionPool> };
}
type CreateCluster = (options: { metadataMaxAge: number; allowAutoTopicCreation: boolean }) => Cluster;

/** At most this many seed brokers are tried (each once, in KafkaJS's rotation). */
const MAX_BROKERS = 16;

/**
 * Tries each seed broker of `kafka` once, in turn, until one accepts a connection.
 * @param kafka the KafkaJS client (`new Kafka(…)`)
 * @returns the brokers tried and the last failure (`error` undefined when one was reached);
 *   `brokers` is empty when this KafkaJS keeps its seed brokers elsewhere
 */
export async function probeSeedBrokers(kafka: Kafka): Promise<ProbeResult> {
  const owner = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(owner).find((s) => s.description === "private:Kafka:createCluster");
  const create = key === undefined ? undefined : owner[key];
  const builder = typeof create === "function"
    ? (create as CreateCluster)({ metadataMaxAge: 0, allowAutoTopicCreation: false }).connectionPoolBuilder
    : undefined;
  if (builder === undefined) return { brokers: [], error: undefined };
  const brokers: string[] = [];
  let error: unknown;
  for (let i = 0; i < MAX_BROKERS; i++) {
    let pool: ConnectionPool;
    try {
      pool = await builder.build(); // the next seed broker (a `brokers` function may throw)
    } catch (e) {
      return { brokers, error: e };
    }
    const address = `${pool.host}:${pool.port}`;
    if (brokers.includes(address)) break; // the rotation came round
    brokers.push(address);
    try {
      await pool.getConnection();
      return { brokers, error: undefined };
    } catch (e) {
      error = e;
    } finally {
      await pool.destroy().catch(() => {});
    }
  }
  return { brokers, error };
}
