/**
 * What the user's record handler is called with: its context besides the record.
 *
 * @module
 */
import type { OutputRecord, TransactionalSend } from "../port/mod.ts";

/** What the handler gets besides the record. */
export interface RecordContext {
  /** Topic of the record. */
  readonly topic: string;
  /** Partition of the record. */
  readonly partition: number;
  /** Offset of the record. */
  readonly offset: number;
  /** 1 on the first call, 2 on the first retry, … */
  readonly attempt: number;
  /** Aborted when the work is abandoned: the partition was lost, or revoked and the drain bound expired, or the shutdown grace expired; a completion after that does not count. */
  readonly signal: AbortSignal;
  /**
   * Exactly-once mode only (`transactional`): stages records to produce; they are
   * committed in one transaction with this record's completion, and only if this attempt
   * succeeds. Absent otherwise.
   */
  readonly send?: (...records: OutputRecord[]) => void;
}

/** The user's record handler. A thrown error or rejected promise is a failed attempt. */
export type Handler<M> = (message: M, context: RecordContext) => unknown;

/** The handler's context in exactly-once mode: {@link RecordContext} with `send`. */
export type TransactionalContext = RecordContext & TransactionalSend;
