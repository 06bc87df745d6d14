import { configDefaults, defineConfig } from "vitest/config";

/** Where the unit and integration tests sit: beside the code (`x.test.ts`, `x.int.test.ts`). */
const besideTheCode = [
  "libs/*/src/**/*.test.ts",
  "libs/*/test/**/*.test.ts",
  "services/*/src/**/*.test.ts",
  "services/edge/webchat/src/**/*.test.ts",
  "scripts/**/*.test.ts",
];
const INTEGRATION = "**/*.int.test.ts";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One worker per core, not vitest's default of one fewer: the e2e and int files spend much of
    // their time waiting on the servers and services they start, and on CI's two cores the
    // default left one worker running the whole suite (docs/decisions.md, Runtime).
    maxWorkers: "100%",
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
    // Suites that start servers and processes run a failed test once more: two workers on two
    // cores starve a process now and then past a test's wait. A test that passes on its second
    // try is named, with its first failure, in CI's output (.ci/run); unit tests never retry
    // (docs/decisions.md, Runtime).
    projects: [
      {
        // Unit tests start nothing: a worker runs file after file in one module graph instead
        // of loading our libraries again for each (docs/decisions.md, Runtime).
        extends: true,
        test: { name: "unit", include: besideTheCode, exclude: [...configDefaults.exclude, INTEGRATION], isolate: false },
      },
      {
        extends: true,
        test: { name: "int", retry: 1, include: besideTheCode.map((glob) => glob.replace(/\*\.test\.ts$/, "*.int.test.ts")) },
      },
      {
        // The end-to-end suites start the services and run the CLI: compiled once per run, as
        // the image runs them (services/gateway/test/service-build.global-setup.ts).
        extends: true,
        test: {
          name: "e2e",
          retry: 1,
          include: ["services/*/test/**/*.test.ts"],
          globalSetup: ["services/gateway/test/service-build.global-setup.ts"],
        },
      },
    ],
  },
});
