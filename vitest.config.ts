import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "libs/*/src/**/*.test.ts",
            "libs/*/test/**/*.test.ts",
            "services/*/src/**/*.test.ts",
            "services/edge/webchat/src/**/*.test.ts",
            "scripts/**/*.test.ts",
          ],
        },
      },
      {
        // The end-to-end suites start the services and run the CLI: compiled once per run, as
        // the image runs them (services/gateway/test/service-build.global-setup.ts).
        extends: true,
        test: {
          name: "e2e",
          include: ["services/*/test/**/*.test.ts"],
          globalSetup: ["services/gateway/test/service-build.global-setup.ts"],
        },
      },
    ],
  },
});
