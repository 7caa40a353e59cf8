/**
 * The handler's context for a record started directly in its delivery (the direct start):
 * two fields instead of a full {@link Work}, because most such records finish before the
 * handler returns and need nothing else. A record still in flight when its handler returns
 * gets its `Work` then; the context it was called with stays valid (its fields never change).
 *
 * @module
 */
import type { Lane } from "../dispatch/mod.ts";
import type { RecordContext } from "./record_context.ts";

/** The context of a record's first attempt when it starts directly (see the module doc). */
export class DirectContext<M> implements RecordContext {
  /**
   * @param lane the record's partition lane
   * @param offset its offset
   */
  constructor(readonly lane: Lane<M>, readonly offset: number) {}

  /** Topic of the record. */
  get topic(): string {
    return this.lane.topic;
  }

  /** Partition of the record. */
  get partition(): number {
    return this.lane.partition;
  }

  /** Always 1: a direct start is the record's first attempt (a retry runs with its `Work`). */
  get attempt(): number {
    return 1;
  }

  /** Aborted when the record's work is abandoned: partition revoked or lost, or the shutdown grace expired. */
  get signal(): AbortSignal {
    return this.lane.controller.signal;
  }
}
