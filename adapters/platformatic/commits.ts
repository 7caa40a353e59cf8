/**
 * Commits of the `@platformatic/kafka` binding: one OffsetCommit at a time (a commit given
 * up on can never land after a newer one), only for partitions of the current assignment
 * and only under the generation that assignment was made in (in the classic protocol the
 * broker accepts a member's commit for any partition while its generation is valid: after
 * a rejoin the same member could commit partitions it no longer owns), acknowledged only
 * when the broker answered error code 0 for every partition ({@link commitFailures}).
 *
 * @module
 */
import type { CommitOffset } from "../../core/consumer/port/mod.ts";
import { commitFailures, type OffsetCommitAnswer } from "./commit_response.ts";
import { CommitNotAcknowledgedError, isUnreachable } from "./errors.ts";
import { sendOffsetCommit } from "./group_requests.ts";
import type { ClientConsumer } from "./types.ts";
import { toStored } from "../shared/stored_metadata.ts";

/** What {@link PlatformaticCommits} reads and drives. */
export interface PlatformaticCommitInputs {
  /** The consumer whose coordinator connection, group, member and generation the commits use. */
  readonly consumer: ClientConsumer;
  /** Whether the binding is running (started and not closed): otherwise nothing is committed. */
  readonly running: () => boolean;
  /** The generation of the current assignment, `undefined` between assignments (nothing is committed then). */
  readonly generation: () => number | undefined;
  /** Whether `topic`/`partition` is in the current assignment. */
  readonly assigned: (topic: string, partition: number) => boolean;
  /** Reports a commit that found no connection to the coordinator. */
  readonly unreachable: (error: unknown) => void;
  /** The broker acknowledged a commit. */
  readonly answered: () => void;
}

/** Sends the binding's commits one at a time. */
export class PlatformaticCommits {
  readonly #in: PlatformaticCommitInputs;
  #tail: Promise<void> = Promise.resolve();

  /**
   * Commits over `inputs`.
   * @param inputs what they read and drive
   */
  constructor(inputs: PlatformaticCommitInputs) {
    this.#in = inputs;
  }

  /** Commits `offsets` once the commit before settled; resolves only when the broker acknowledged every partition. */
  commit(offsets: readonly CommitOffset[]): Promise<void> {
    const run = this.#tail.then(() => this.#send(offsets));
    this.#tail = run.then(() => {}, () => {});
    return run;
  }

  async #send(offsets: readonly CommitOffset[]): Promise<void> {
    const inputs = this.#in;
    const all = offsets.map((o) => ({ topic: o.topic, partition: o.partition, errorCode: undefined }));
    if (!inputs.running()) throw new CommitNotAcknowledgedError(all, new Error("the consumer is not running: nothing was sent"));
    const generation = inputs.generation();
    if (generation === undefined || generation !== inputs.consumer.generationId) {
      throw new CommitNotAcknowledgedError(all, new Error("the group is rebalancing (no current generation): nothing was sent"));
    }
    for (const o of offsets) {
      if (!inputs.assigned(o.topic, o.partition)) {
        throw new CommitNotAcknowledgedError(all, new Error(`refusing to commit ${o.topic}/${o.partition}: not in the current assignment`));
      }
    }
    let answer: OffsetCommitAnswer | undefined;
    try {
      answer = await sendOffsetCommit(
        inputs.consumer,
        generation,
        offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset, metadata: toStored(o.metadata) ?? null })),
      );
    } catch (error) {
      if (isUnreachable(error)) inputs.unreachable(error);
      const response = (error as { response?: OffsetCommitAnswer }).response;
      const failures = commitFailures(offsets, response && Array.isArray(response.topics) ? response : undefined);
      throw new CommitNotAcknowledgedError(failures.length > 0 ? failures : all, error);
    }
    const failures = commitFailures(offsets, answer);
    if (failures.length > 0) throw new CommitNotAcknowledgedError(failures);
    inputs.answered();
  }
}
