/**
 * Commits and handovers: the commit scheduler (one in flight, coalesced, only safe
 * positions), the completed-set claims read back at assignment, the stall guard, the orderly
 * revoke of a rebalance, the shutdown's drain and final commit, and exactly-once transactions
 * per partition. Imports the dispatch and port rooms.
 *
 * @module
 */
export * from "./claims.ts";
export * from "./commit_scheduler.ts";
export * from "./exactly_once.ts";
export * from "./rebalance.ts";
export * from "./shutdown.ts";
export * from "./stall.ts";
