#!/usr/bin/env node
// Run a command against one real Kafka broker (test/broker/broker.ts).
//
//   node scripts/with-broker.mjs [--log-dir DIR] -- <command> [args...]
//
// Starts a single-node KRaft broker on 127.0.0.1, runs the command with KAFKA_BROKERS
// set (stdio inherited), stops the broker whatever happens (command failure, SIGINT,
// SIGTERM, SIGHUP) and exits with the command's exit code (128 + signal number if the
// command was killed by a signal). A second signal exits at once; the broker module's
// exit hook then SIGKILLs the broker. If KAFKA_BROKERS is already set, no broker is
// started and the command runs against that one. --log-dir keeps the broker log there.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import process from "node:process";
import { tsImport } from "tsx/esm/api";
import { parseCli, usageError } from "./cli.mjs";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const { values } = parseCli({
  name: "with-broker",
  usage: `usage: node scripts/with-broker.mjs [--log-dir DIR] -- <command> [args...]

Starts a single-node Kafka broker (or uses KAFKA_BROKERS), runs the command with
KAFKA_BROKERS set, stops the broker and exits with the command's exit code.

  --log-dir DIR        keep the broker log there
  -h, --help           this text (only before --)`,
  options: { "log-dir": { type: "string" } },
  argv: sep >= 0 ? argv.slice(0, sep) : argv,
});
const command = sep >= 0 ? argv.slice(sep + 1) : [];
const logDir = values["log-dir"];
if (command.length === 0) usageError("with-broker", "no command given after --");

const signalExit = (sig) => 128 + (constants.signals[sig] ?? 0);

const state = {
  broker: undefined, // set once started
  child: undefined, // set once spawned
  signalled: undefined, // first signal received
  finishing: false,
};

async function finish(code) {
  if (state.finishing) return;
  state.finishing = true;
  if (state.broker) {
    try {
      await state.broker.stop();
    } catch (e) {
      console.error(`with-broker: stopping the broker failed: ${e instanceof Error ? e.message : e}`);
    }
  }
  process.exit(code);
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (state.signalled !== undefined) {
      // Second signal: leave now; the exit hook in broker.ts kills the broker.
      process.exit(signalExit(sig));
    }
    state.signalled = sig;
    const { child } = state;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill(sig); // the command's exit then runs finish()
    } else if (state.broker) {
      void finish(signalExit(sig));
    }
    // Still starting: checked once startBroker() returns.
  });
}

let brokers = process.env.KAFKA_BROKERS;
if (brokers) {
  console.error(`with-broker: using KAFKA_BROKERS=${brokers}`);
} else {
  const t0 = performance.now();
  let startBroker;
  try {
    ({ startBroker } = await tsImport("../test/broker/broker.ts", import.meta.url));
    state.broker = await startBroker(logDir ? { logDir } : {});
  } catch (e) {
    console.error(`with-broker: broker did not start: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  }
  brokers = state.broker.brokers;
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  console.error(`with-broker: Kafka up at ${brokers} (pid ${state.broker.pid}) in ${secs}s`);
  if (state.signalled !== undefined) await finish(signalExit(state.signalled));
}

const child = spawn(command[0], command.slice(1), {
  stdio: "inherit",
  env: { ...process.env, KAFKA_BROKERS: brokers },
});
child.on("error", (e) => {
  console.error(`with-broker: cannot run ${command[0]}: ${e.message}`);
  void finish(127);
});
child.on("exit", (code, sig) => {
  void finish(code ?? signalExit(sig ?? state.signalled ?? "SIGTERM"));
});
state.child = child;
