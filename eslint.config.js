// Lint for every workspace: eslint's and typescript-eslint's recommended rules, without
// type information so `npm test` stays fast. Generated code is left alone.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import gwBoundaries from "./scripts/lint/import-boundaries.mjs";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/gen/**", "**/dist/**", "**/data/**", "bench/results/**", ".prof/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: "readonly", Buffer: "readonly", console: "readonly", URL: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      eqeqeq: ["error", "always"],
      "no-console": "error",
    },
  },
  {
    // Dependency directions (root README, "Layout"); scripts/lint/import-boundaries.test.ts.
    files: ["libs/**/*.ts", "services/**/*.ts"],
    plugins: { gw: gwBoundaries },
    rules: { "gw/import-boundaries": "error" },
  },
  {
    files: ["scripts/**/*.mjs", "scripts/**/*.ts", "bench/**/*.ts", "**/*.test.ts", "**/test/**/*.ts"],
    rules: { "no-console": "off" },
  },
);
