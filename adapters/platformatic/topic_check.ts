/**
 * The start's check that the topics exist: the subscribed ones and the dead-letter topics
 * they map to, each asked for with one Metadata request without the client's retries
 * (`retries: 0`, topic creation off). Without it the client's join retried an unknown topic
 * for seconds (6.8 s in issue 42) and ended in a `UserError` the binding read as a
 * configuration refusal naming no topic; a missing dead-letter topic showed only as
 * `dead-letter` errors, record after record, until the partition stopped. A topic answered
 * unknown is asked for once more after {@link CONFIRM_MS} (one created just before the start
 * may not be known to every broker yet), then refused with a {@link ClusterRefusedError} of
 * kind `unknown-topic` naming it. Any other failure is thrown as the client's error: the
 * start reads it as an outage (waited out with the runner's backoff) or a refusal.
 *
 * @module
 */
import { ClusterRefusedError } from "../../core/errors.ts";
import { unknownTopicOf } from "./errors.ts";

/** How long a topic answered unknown waits before it is asked for again, ms. */
export const CONFIRM_MS = 500;

/** The client's metadata request, as the check uses it (a `@platformatic/kafka` consumer or producer). */
export interface MetadataClient {
  /** One Metadata request (the client's own; `retries: 0` sends it once). */
  metadata(options: { topics: string[]; autocreateTopics: boolean; retries: number }): Promise<unknown>;
}

/** The topics of `topics` the cluster does not know, and the client's error for the first; throws any other failure. */
async function unknown(client: MetadataClient, topics: readonly string[]): Promise<{ names: string[]; error: unknown }> {
  const names: string[] = [];
  let first: unknown;
  const answers = await Promise.allSettled(topics.map((t) => client.metadata({ topics: [t], autocreateTopics: false, retries: 0 })));
  answers.forEach((a, i) => {
    if (a.status === "fulfilled") return;
    if (unknownTopicOf(a.reason) === undefined) throw a.reason;
    names.push(topics[i]);
    first ??= a.reason;
  });
  return { names, error: first };
}

/**
 * Resolves once every topic of `topics` exists (asked through `client`).
 * @param client the consumer (subscribed topics) or the dead-letter producer
 * @param topics the topic names
 * @param role how the refusal names them: `"topic"` or `"dead-letter topic"`
 * @param signal ends the confirming wait early (the refusal is then not made)
 * @throws {ClusterRefusedError} of kind `unknown-topic` naming the topics the cluster does not know
 */
export async function checkTopicsExist(client: MetadataClient, topics: readonly string[], role: "topic" | "dead-letter topic", signal: AbortSignal): Promise<void> {
  const wanted = [...new Set(topics)];
  if (wanted.length === 0) return;
  let missing = await unknown(client, wanted);
  if (missing.names.length === 0) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, CONFIRM_MS);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
  if (signal.aborted) return;
  missing = await unknown(client, missing.names);
  if (missing.names.length > 0) throw new ClusterRefusedError("unknown-topic", undefined, missing.names, missing.error, role);
}
