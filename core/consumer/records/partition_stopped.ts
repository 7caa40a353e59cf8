/**
 * The error of a partition stopped because one of its records failed for good.
 *
 * @module
 */
import { OffsetFrontierError } from "../../errors.ts";

/** A record failed for good under `onExhausted: "stop"` (or its dead letter could not be produced): its partition stopped. */
export class PartitionStoppedError extends OffsetFrontierError {
  /** Topic of the failed record. */
  readonly topic: string;
  /** Partition that stopped. */
  readonly partition: number;
  /** Offset of the failed record: the partition's safe position stays at or below it. */
  readonly offset: number;
  /** The handler's (or the dead-letter producer's) last error. */
  override readonly cause: unknown;
  /**
   * The error of a partition stopped at `offset`.
   * @param topic topic
   * @param partition partition
   * @param offset offset of the failed record
   * @param cause last error
   */
  constructor(topic: string, partition: number, offset: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`partition ${topic}/${partition} stopped: the record at offset ${offset} failed for good (${why})`);
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.cause = cause;
  }
}
