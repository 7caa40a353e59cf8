/** The engines every engine-generic test runs against. */
export const ENGINES = ["js"] as const;
