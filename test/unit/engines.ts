/** The engines every engine-generic test runs against. */
export const ENGINES = ["js", "wasm"] as const;
