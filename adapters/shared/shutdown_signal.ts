/**
 * The process signals a `consume()` may shut down on, named without `@types/node` (whose
 * `NodeJS.Signals` a Bun or Deno project may not have): the public types of the entry points
 * that run on all three runtimes use this.
 *
 * @module
 */

/**
 * A signal `consume()` can shut down on, on Node, Bun and Deno: Ctrl-C (`SIGINT`), a service
 * manager's stop (`SIGTERM`), a closed terminal (`SIGHUP`), `SIGQUIT`, `SIGUSR2` (nodemon's
 * restart) and Windows' Ctrl-Break (`SIGBREAK`).
 */
export type ShutdownSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT" | "SIGUSR2" | "SIGBREAK";
