/** Types of test-output.mjs: what a test runner's output says. */

/** The text without ANSI colours. */
export function plain(text: string): string;

/** Passing and failing counts from node:test (TAP), bun test and deno test output. */
export function counts(text: string): { pass: number; fail: number; found: boolean };

/** The failed tests, each as "name — first line of its error" (or the name alone). */
export function failedTests(text: string): string[];
