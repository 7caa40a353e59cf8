/** The pinned version of @confluentinc/kafka-javascript the tests use. */
export const CONFLUENT_VERSION: string;
/** Where it is installed (`.cache/confluent`). */
export const CONFLUENT_PREFIX: string;
/** True when the pinned version is installed with its addon built. */
export function confluentInstalled(): boolean;
/** Installs the pinned version unless present; returns the seconds it took (0 when present). */
export function ensureConfluent(options?: { quiet?: boolean }): number;
