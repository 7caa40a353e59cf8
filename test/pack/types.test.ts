/**
 * The public types of `offset-frontier/platformatic` need no `@types/node`: a Bun or Deno
 * project may have none. Issue 42: a user's project failed with TS2503 "Cannot find namespace
 * 'NodeJS'" (from `signals?: readonly NodeJS.Signals[]`), and TS2305 on the error classes the
 * entry point did not export. A fresh project with the `npm pack` tarball (no @types/node
 * installed, `"types": []`, `skipLibCheck: false`) type-checks a small consumer that imports
 * the factory, the signal type and the errors a user catches. @platformatic/kafka's own
 * declarations do need Node's types; what they report is theirs and left out: only the
 * consumer file and this package's declarations must be clean.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BIN, packProject, ROOT } from "./pack_project.ts";

const CONSUMER = `import { Consumer } from "@platformatic/kafka";
import {
  ClusterRefusedError,
  ClusterUnavailableError,
  consume,
  type ConsumerLogger,
  InvalidArgumentError,
  type ShutdownSignal,
  StartInterruptedError,
} from "offset-frontier/platformatic";

const signals: ShutdownSignal[] = ["SIGINT", "SIGTERM"];
const logger: ConsumerLogger = { warn: (m) => console.warn(m), error: (m) => console.error(m) };
try {
  const consumer = await consume({
    consumer: new Consumer({ groupId: "orders", clientId: "orders-worker", bootstrapBrokers: ["127.0.0.1:9092"] }),
    topics: ["orders"],
    signals,
    logger,
    maxWaitTime: 500,
    handler: async (message, { partition, offset }) => {
      const text: string = message.value?.toString() ?? "";
      console.log(partition, offset, text);
    },
  });
  await consumer.done;
} catch (e) {
  if (e instanceof ClusterRefusedError) console.error(e.kind, e.topics.join(","));
  else if (e instanceof ClusterUnavailableError) console.error(e.brokers.join(","));
  else if (e instanceof StartInterruptedError || e instanceof InvalidArgumentError) console.error(e.message);
  else throw e;
}
`;

test("offset-frontier/platformatic type-checks in a project without @types/node, errors included", { timeout: 180_000 }, () => {
  const p = packProject({
    prefix: "offset-frontier-types-",
    npm: [["pkg", "set", "type=module"]],
    links: { "@platformatic/kafka": join(ROOT, "node_modules", "@platformatic", "kafka") },
  });
  try {
    assert.equal(existsSync(join(p.project, "node_modules", "@types", "node")), false, "the project has no @types/node");
    writeFileSync(join(p.project, "consumer.ts"), CONSUMER);
    writeFileSync(
      join(p.project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: [],
          lib: ["ES2022", "DOM"],
          skipLibCheck: false,
        },
        files: ["consumer.ts"],
      }),
    );
    const r = spawnSync(join(BIN, "tsc"), ["-p", "."], { cwd: p.project, encoding: "utf8", timeout: 120_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    assert.ok(r.status !== null, `tsc ran (${r.error ?? ""})`);
    // Diagnostics start at column 0 with the file's path; only ours and the consumer's count.
    const ours = out.split("\n").filter((l) => /^(consumer\.ts|node_modules\/offset-frontier\/)/.test(l));
    assert.deepEqual(ours, [], `diagnostics in the consumer or offset-frontier's declarations:\n${out.slice(0, 4_000)}`);
  } finally {
    p.remove();
  }
});
