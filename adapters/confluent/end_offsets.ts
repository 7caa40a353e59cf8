/**
 * Paused partitions' log end offsets through Confluent's client, for the lag in
 * `metrics()`. librdkafka fetches nothing of a paused partition, so the high watermark it
 * caches (what `batch.highWatermark` carries) stops moving; the runner asks for those
 * partitions at its commit interval, and this answers with the consumer's dependent admin
 * client (`consumer.dependentAdmin()`, over the consumer's own connections):
 * `fetchTopicOffsets` per topic, two ListOffsets requests per leader.
 *
 * @module
 */
import type { EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { endOffsetsByTopic } from "../shared/end_offsets.ts";
import type { ConfluentAdmin, ConfluentConsumer } from "./types.ts";

/** The dependent admin of one connected consumer, connected on first use. */
export class ConfluentEndOffsets {
  readonly #consumer: () => ConfluentConsumer | undefined;
  #admin: Promise<ConfluentAdmin> | undefined;
  #closed = false;

  /**
   * End offsets through `consumer()`'s dependent admin.
   * @param consumer the connected consumer, or `undefined` while there is none
   */
  constructor(consumer: () => ConfluentConsumer | undefined) {
    this.#consumer = consumer;
  }

  /** The log end offsets of `partitions` (partitions whose query failed are left out). */
  async query(partitions: readonly TopicPartition[]): Promise<EndOffset[]> {
    const consumer = this.#consumer();
    if (this.#closed || consumer === undefined || typeof consumer.dependentAdmin !== "function") return [];
    if (this.#admin === undefined) {
      const admin = consumer.dependentAdmin();
      this.#admin = admin.connect().then(() => admin);
      this.#admin.catch(() => (this.#admin = undefined)); // tried again at the next call
    }
    const admin = await this.#admin;
    return await endOffsetsByTopic(partitions, (topic) => admin.fetchTopicOffsets(topic, { timeout: 5_000 }));
  }

  /** Disconnects the admin client, if connected (before the consumer). */
  async close(): Promise<void> {
    this.#closed = true;
    const admin = await this.#admin?.catch(() => undefined);
    this.#admin = undefined;
    await admin?.disconnect().catch(() => {});
  }
}
