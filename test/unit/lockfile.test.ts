/**
 * The lock file agrees with package.json: what `npm ci` installs is what the manifest
 * declares, so `npm install` on a fresh clone rewrites nothing (it did once: an optional
 * peer added to package.json without the lock).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const read = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../../${name}`, import.meta.url), "utf8"));

test("package-lock.json's root entry declares exactly package.json's dependencies, peers and engines", () => {
  const manifest = read("package.json");
  const root = (read("package-lock.json").packages as Record<string, Record<string, unknown>>)[""];
  for (const field of ["name", "version", "license", "dependencies", "devDependencies", "peerDependencies", "peerDependenciesMeta", "engines"]) {
    assert.deepEqual(root[field], manifest[field], `package-lock.json's root ${field} is package.json's`);
  }
});
