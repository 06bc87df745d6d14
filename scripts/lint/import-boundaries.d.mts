// Types of import-boundaries.mjs for the TypeScript that imports it (its tests).
import type { ESLint, Rule } from "eslint";

export function createImportBoundariesRule(root?: string): Rule.RuleModule;
export function createUpwardImportsRule(root?: string): Rule.RuleModule;
/** Every upward import of every service, as `service: module -> target (how)` lines, and a count per service. */
export function upwardImportReport(root?: string): { lines: string[]; counts: Map<string, number> };

declare const plugin: ESLint.Plugin;
export default plugin;
