/**
 * What the binding needs of the consumer's group options, checked when it is created.
 *
 * @module
 */
import { kOptions } from "@platformatic/kafka";
import { describe, InvalidArgumentError } from "../../core/errors.ts";
import type { ClientConsumer } from "./types.ts";

/**
 * Refuses a consumer whose group options the binding cannot run yet: the KIP-848 protocol
 * (`groupProtocol: "consumer"`: the client joins such a group only through its `consume()`
 * stream), the cooperative-sticky assignor (incremental revokes are not wired yet), or a
 * `protocolsMetadata` hook of its own (the binding's awaited revoke is that hook).
 * @throws {InvalidArgumentError} naming the option and its value
 */
export function groupOptions(consumer: ClientConsumer): void {
  const o = consumer[kOptions] as { groupProtocol?: unknown; protocols?: Array<{ name?: unknown }>; protocolsMetadata?: unknown };
  if (o.groupProtocol !== undefined && o.groupProtocol !== "classic") {
    throw new InvalidArgumentError(`groupProtocol must be "classic" (KIP-848 is not supported by this binding yet); got ${describe(o.groupProtocol)}`);
  }
  for (const p of o.protocols ?? []) {
    if (p.name === "cooperative-sticky") {
      throw new InvalidArgumentError(`protocols must be eager assignors (e.g. "roundrobin"); got ${describe(p.name)}`);
    }
  }
  if (o.protocolsMetadata !== undefined) {
    throw new InvalidArgumentError(`protocolsMetadata must not be set: the binding uses it to revoke before each join; got ${describe(o.protocolsMetadata)}`);
  }
}
