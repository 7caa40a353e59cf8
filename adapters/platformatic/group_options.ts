/**
 * What the binding needs of the consumer's group options, checked when it is created.
 *
 * @module
 */
import { kOptions } from "@platformatic/kafka";
import { describe, InvalidArgumentError } from "../../core/errors.ts";
import type { ClientConsumer } from "./types.ts";

/** The cooperative-sticky assignor's protocol name. */
const COOPERATIVE_STICKY = "cooperative-sticky";

/** How the binding runs the consumer's group. */
export interface GroupMode {
  /**
   * The classic protocol with the cooperative-sticky assignor: a rebalance revokes only
   * the partitions that move, in a round of their own, and the rest carry on.
   */
  readonly cooperative: boolean;
}

/**
 * Checks the consumer's group options and says how the binding runs the group. Refuses
 * what it cannot run: the KIP-848 protocol (`groupProtocol: "consumer"`: the client joins
 * such a group only through its `consume()` stream and keeps the member epoch private), a
 * mix of cooperative-sticky with eager assignors (the group could pick either, and the
 * binding must know which rebalance protocol runs), or a `protocolsMetadata` hook of its
 * own (the binding's awaited revoke is that hook).
 * @throws {InvalidArgumentError} naming the option and its value
 */
export function groupOptions(consumer: ClientConsumer): GroupMode {
  const o = consumer[kOptions] as { groupProtocol?: unknown; protocols?: Array<{ name?: unknown }>; protocolsMetadata?: unknown };
  if (o.groupProtocol !== undefined && o.groupProtocol !== "classic") {
    throw new InvalidArgumentError(`groupProtocol must be "classic" (KIP-848 is not supported by this binding yet); got ${describe(o.groupProtocol)}`);
  }
  if (o.protocolsMetadata !== undefined) {
    throw new InvalidArgumentError(`protocolsMetadata must not be set: the binding uses it to revoke before each join; got ${describe(o.protocolsMetadata)}`);
  }
  const names = (o.protocols ?? []).map((p) => p.name);
  const cooperative = names.includes(COOPERATIVE_STICKY);
  if (cooperative && names.length > 1) {
    throw new InvalidArgumentError(
      `protocols must be either [{ name: "${COOPERATIVE_STICKY}" }] alone or eager assignors only; got ${JSON.stringify(names)}`,
    );
  }
  return { cooperative };
}
