import { rmSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error: a plain ES module script without type declarations
import { buildServices } from "../../../scripts/build-services.mjs";
import { ROOT } from "./fixtures/processes.js";

/**
 * Once per run of the end-to-end project: compiles every service and the CLI
 * (scripts/build-services.mjs, what the image runs), and points GW_SERVICE_BUILD at it, so the
 * processes the tests start and the `gateway` commands they run are plain JavaScript. Through
 * tsx each of them transformed and loaded our TypeScript again: about twice the CPU at start,
 * which on CI's two cores was the larger part of an end-to-end file's time (docs/decisions.md,
 * Runtime). GW_SERVICE_BUILD already set keeps that build; GW_E2E_SOURCE=1 runs the source
 * through tsx instead.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.GW_SERVICE_BUILD || process.env.GW_E2E_SOURCE === "1") return undefined;
  // Inside the repository, so the bundles resolve their packages from its node_modules as the
  // image's do from /app/node_modules.
  const dir = join(ROOT, "dist", `e2e-${process.pid}`);
  await (buildServices as (outdir: string, root: string) => Promise<string[]>)(dir, ROOT);
  // Set before the first test file starts: every worker and every process it spawns inherits it.
  process.env.GW_SERVICE_BUILD = dir;
  return () => {
    delete process.env.GW_SERVICE_BUILD;
    rmSync(dir, { recursive: true, force: true });
  };
}
