/**
 * A record key's hash over its bytes, for the port's `keyHashOf` (client.ts): what the
 * batch handler's no-key-twice check reads instead of the key string the bindings' `keyOf`
 * makes (`key.toString("latin1")`, one string allocated per record). Equal bytes give equal
 * hashes, and the latin1 string has one character per byte, so equal `keyOf` strings give
 * equal hashes, as the port asks.
 *
 * @module
 */

/**
 * FNV-1a (32-bit) over every byte of `key`; `undefined` for no key (`null`/`undefined`).
 * @param key the record's key bytes, as the client hands them over
 * @example
 * ```ts
 * import { keyBytesHash } from "./key_hash.ts";
 * keyBytesHash(new TextEncoder().encode("k1")) === keyBytesHash(new TextEncoder().encode("k1")); // true
 * keyBytesHash(null); // undefined
 * ```
 */
export function keyBytesHash(key: Uint8Array | null | undefined): number | undefined {
  if (key == null) return undefined;
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
  return h;
}
