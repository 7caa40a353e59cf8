/**
 * The `@platformatic/kafka` types that appear in this binding's public API, and the record
 * it delivers.
 *
 * @module
 */
import type * as platformatic from "@platformatic/kafka";

/**
 * The client's bytes: a Node `Buffer` (on Bun and Deno too). Named through the client's own
 * types, not `node:buffer`, so that this binding's types need no `@types/node` (a Bun or Deno
 * project may have none): with it, this is `Buffer`.
 */
export type Bytes = ClientMessage["key"];

/** A record as the client's own `consume()` stream would deliver it (its `Message`, Buffer keys and values); the binding delivers {@link PlatformaticMessage}. */
export type ClientMessage = platformatic.Message;

/**
 * A `@platformatic/kafka` consumer with raw (Buffer) keys, values and headers (the default):
 * `new Consumer({ groupId, clientId, bootstrapBrokers })`. Named structurally in the public
 * API (the client's class drags its private types into JSR's documentation); the binding
 * checks at runtime that it is one.
 */
export interface PlatformaticConsumer {
  /** The consumer group. */
  readonly groupId: string;
  /** The client id. */
  readonly clientId: string;
  /** Joins the group (classic protocol). */
  joinGroup(...args: never[]): unknown;
  /** One Fetch request. */
  fetch(...args: never[]): unknown;
}

/** A `@platformatic/kafka` producer with raw (Buffer) keys, values and headers: `new Producer({ clientId, bootstrapBrokers })`. */
export interface PlatformaticProducer {
  /** Produces records. */
  send(...args: never[]): unknown;
  /** Closes the producer. */
  close(...args: never[]): unknown;
}

/** The client's consumer class as the binding drives it (not part of the public API). */
export type ClientConsumer = platformatic.Consumer; // Buffer keys, values and headers: the client's defaults
/** The client's producer class as the binding drives it (not part of the public API). */
export type ClientProducer = platformatic.Producer;

/**
 * A record as this binding delivers it: the raw bytes of the fetch response (the binding
 * drives `Consumer.fetch` itself, so the client's deserializers are not applied).
 */
export interface PlatformaticMessage {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
  /** The record's offset, as a decimal string. */
  readonly offset: string;
  /** The record's timestamp (ms since the epoch), as a decimal string. */
  readonly timestamp: string;
  /** The key, `null` for none. */
  readonly key: Bytes | null;
  /** The value, `null` for a tombstone. */
  readonly value: Bytes | null;
  /** Headers by name (UTF-8); a repeated name keeps its last value. */
  readonly headers: Readonly<Record<string, Bytes | null>>;
}
