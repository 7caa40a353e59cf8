#!/usr/bin/env node
// `npm run playground`: bundles playground/main.ts (the real core/ plus the page's
// simulated client) for the browser with esbuild, copies index.html, style.css, the
// README and the docs/ pages (the page links them), and serves the folder on 127.0.0.1, printing the
// address. `--out DIR --build-only` writes a folder any static host can serve and exits.
// The bundle must not pull in any node: module: core/ is runtime-agnostic, and esbuild
// with platform "browser" fails the build if something in it imports one.
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { intFlag, parseCli } from "./cli.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseCli({
  name: "playground",
  usage: "usage: node scripts/playground.mjs [--out DIR] [--port N] [--build-only]\n\n" +
    "Builds the playground page (playground/) into DIR (default playground/dist) and serves it on\n" +
    "127.0.0.1:N (default 8036; 0 picks a free port), printing the address. --build-only: build and exit.",
  options: { out: { type: "string" }, port: { type: "string" }, "build-only": { type: "boolean" } },
});
const out = resolve(values.out ?? join(root, "playground", "dist"));
const port = values.port === undefined ? 8036 : intFlag("playground", "port", values.port, 0, 65535);

/** Bundles the page into `dir`. */
async function build(dir) {
  mkdirSync(dir, { recursive: true });
  const result = await esbuild.build({
    entryPoints: [join(root, "playground", "main.ts")],
    outfile: join(dir, "main.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: true,
    logLevel: "warning",
    metafile: true,
  });
  const nodeImports = Object.keys(result.metafile.inputs).filter((f) => f.startsWith("node:"));
  if (nodeImports.length > 0) throw new Error(`the page bundle imports ${nodeImports.join(", ")}`);
  for (const f of ["index.html", "style.css"]) copyFileSync(join(root, "playground", f), join(dir, f));
  copyFileSync(join(root, "README.md"), join(dir, "README.md"));
  mkdirSync(join(dir, "docs"), { recursive: true });
  for (const f of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))) copyFileSync(join(root, "docs", f), join(dir, "docs", f));
}

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".map": "application/json", ".md": "text/markdown; charset=utf-8" };

await build(out);
if (values["build-only"]) {
  process.stdout.write(`playground built in ${out}\n`);
} else {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)).replace(/^([/\\])+/, "");
    const file = join(out, path === "" ? "index.html" : path);
    if (!file.startsWith(out)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = readFileSync(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" }).end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  server.listen(port, "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`playground: http://127.0.0.1:${typeof address === "object" && address ? address.port : port}/\n`);
  });
  const stop = () => process.exit(0);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
