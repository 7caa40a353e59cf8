/** The pinned version of each Node line. */
export declare const NODE_VERSIONS: { readonly 22: string; readonly 24: string };
/** Where the binary of `version` lives once installed. */
export declare function nodeBinary(version: string): string;
/** Installs the pinned Node of `line` (22 or 24) unless present; returns the binary's path. */
export declare function ensureNode(line: 22 | 24 | "22" | "24", options?: { quiet?: boolean }): string;
