/**
 * An exactly-once attempt's outputs: the handler's context gains `send`, which checks each
 * output and keeps it until the attempt settles; only a successful attempt's outputs are
 * staged with its completion (record_runner.ts), and a `send` after the attempt settled throws.
 *
 * @module
 */
import { checkOutput, type OutputRecord } from "../port/mod.ts";
import { InvalidArgumentError } from "../../errors.ts";
import type { RecordContext, TransactionalContext } from "./record_context.ts";

/** One attempt's `send` and the outputs it kept (see the module doc). */
export class StagedOutputs {
  /** The handler's context for the attempt: the record's fields and `send`. */
  readonly context: TransactionalContext;
  readonly #outputs: OutputRecord[] = [];
  #open = true;

  /**
   * @param record the attempt's record context (its fields are copied into {@link context})
   * @param wrap applied to each checked output before it is kept (tracing: the span's headers)
   */
  constructor(record: RecordContext, wrap?: (output: OutputRecord) => OutputRecord) {
    const send = (...records: OutputRecord[]): void => {
      if (!this.#open) throw new InvalidArgumentError(`send() after the handler of ${record.topic}/${record.partition}@${record.offset} settled`);
      for (const r of records) this.#outputs.push(wrap === undefined ? checkOutput(r) : wrap(checkOutput(r)));
    };
    const { topic, partition, offset, attempt, signal } = record;
    this.context = { topic, partition, offset, attempt, signal, send } as TransactionalContext;
  }

  /** The attempt settled: `send` throws from now on. Returns the outputs it kept. */
  close(): readonly OutputRecord[] {
    this.#open = false;
    return this.#outputs;
  }
}
