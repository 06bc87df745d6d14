// Lint for every workspace: eslint's and typescript-eslint's recommended rules, plus the
// type-aware promise rules (a promise nobody handles ends the process: issue 29). Generated
// code is left alone.
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
    // A floating or misused promise is how one request took down the whole gateway (issue 29):
    // every promise is awaited, returned, or handed to `void` after its errors are handled.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: false }],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: true, attributes: false } }],
      "@typescript-eslint/promise-function-async": "off",
    },
  },
  {
    // Dependency directions (root README, "Layout"), and no upward import inside a service
    // (issue 27 §6); both defined in scripts/lint/import-boundaries.mjs, tested beside it.
    files: ["libs/**/*.ts", "services/**/*.ts"],
    plugins: { gw: gwBoundaries },
    rules: { "gw/import-boundaries": "error", "gw/upward-imports": "error" },
  },
  {
    // Small files, one concern each (STYLE.md 11, issue 27 §6): no hand-written production file
    // over 300 lines and no function over 80, blank lines and comments not counted. Generated
    // code is ignored above; tests, contract suites and libs/testing's test tooling are exempt.
    files: ["libs/**/*.ts", "services/**/*.ts", "scripts/**/*.ts", "scripts/**/*.mjs", "bench/**/*.ts", "bench/**/*.mjs"],
    ignores: ["**/*.test.ts", "**/test/**", "**/*.contract.ts", "**/contract-helpers.ts", "libs/testing/**"],
    rules: {
      "max-lines": ["error", { max: 300, skipBlankLines: true, skipComments: true }],
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Browser code (the web app and the client it bundles, scripts/gen-webchat.mjs): no Node
    // globals or modules, and of the gateway's own packages, which run in Node, only types
    // (esbuild drops type imports). tsc reads those packages with Node's types, so this guards it.
    files: ["libs/client/src/**/*.ts", "services/edge/webchat/src/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-globals": ["error", "Buffer", "process", "global", "require", "__dirname", "__filename", "setImmediate"],
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*"], message: "browser code: no Node modules" },
            { group: ["@gw/*", "!@gw/client"], allowTypeImports: true, message: "browser code takes only types from the gateway's Node packages" },
          ],
        },
      ],
    },
  },
  {
    files: ["scripts/**/*.mjs", "scripts/**/*.ts", "bench/**/*.ts", "bench/**/*.mjs", "**/*.test.ts", "**/test/**/*.ts"],
    rules: { "no-console": "off" },
  },
);
