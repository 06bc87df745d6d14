import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "libs/*/src/**/*.test.ts",
      "libs/*/test/**/*.test.ts",
      "services/*/src/**/*.test.ts",
      "services/edge/webchat/src/**/*.test.ts",
      "services/*/test/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
  },
});
