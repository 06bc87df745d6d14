import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type Lockfile, productionDependencyProblems, readManifests } from "./check-prod-deps.js";

const repoRoot = new URL("..", import.meta.url).pathname;

describe("productionDependencyProblems", () => {
  it("finds no test tooling in this repository's production dependencies", () => {
    const lock = JSON.parse(readFileSync(`${repoRoot}package-lock.json`, "utf8")) as Lockfile;
    const manifests = readManifests(repoRoot);
    expect(manifests.map((m) => m.name)).toContain("@gw/testing");
    expect(productionDependencyProblems(manifests, lock)).toEqual([]);
    // The test harness and its container fallback are installed, but only as dev packages.
    expect(lock.packages["node_modules/testcontainers"]).toMatchObject({ dev: true });
  });

  it("fires when a workspace lists the harness or testcontainers as a production dependency", () => {
    const problems = productionDependencyProblems(
      [
        { name: "@gw/edge", dependencies: { "@gw/testing": "*", fastify: "^5" } },
        { name: "@gw/testing", dependencies: { testcontainers: "^11" } },
        { name: "@gw/store", peerDependencies: { "@testcontainers/redis": "^11" }, optionalDependencies: { vitest: "^4" } },
      ],
      { packages: {} },
    );
    expect(problems).toEqual([
      "@gw/edge lists @gw/testing in dependencies: test tooling belongs in devDependencies",
      "@gw/testing lists testcontainers in dependencies: test tooling belongs in devDependencies",
      "@gw/store lists vitest in optionalDependencies: test tooling belongs in devDependencies",
      "@gw/store lists @testcontainers/redis in peerDependencies: test tooling belongs in devDependencies",
    ]);
  });

  it("fires when the lockfile would install a test-only package without --omit=dev leaving it out", () => {
    const lock: Lockfile = {
      packages: {
        "": {},
        "node_modules/@gw/testing": { link: true },
        "node_modules/testcontainers": { dev: true },
        "node_modules/some-sdk/node_modules/testcontainers": {},
        "node_modules/fastify": {},
      },
    };
    expect(productionDependencyProblems([], lock)).toEqual([
      "npm ci --omit=dev would install testcontainers (node_modules/some-sdk/node_modules/testcontainers is not marked dev in package-lock.json)",
    ]);
  });
});
