// Proves production installs carry no test tooling: no workspace lists a test-only package
// among its production dependencies, and the lockfile marks every test-only package `dev`, so
// `npm ci --omit=dev` (what the images run) leaves it out. Exits 1 naming each offender.
//   tsx scripts/check-prod-deps.ts
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Packages that exist for tests only. */
const TEST_ONLY = [/^@gw\/testing$/, /^testcontainers$/, /^@testcontainers\//, /^vitest$/, /^@vitest\//, /^fast-check$/];

export function isTestOnly(name: string): boolean {
  return TEST_ONLY.some((pattern) => pattern.test(name));
}

export interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface Lockfile {
  packages: Record<string, { dev?: boolean; link?: boolean }>;
}

const PRODUCTION_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies"] as const;

/** The installed package name of a lockfile path such as `node_modules/a/node_modules/@s/b`. */
function packageNameOf(lockPath: string): string | undefined {
  const at = lockPath.lastIndexOf("node_modules/");
  return at === -1 ? undefined : lockPath.slice(at + "node_modules/".length);
}

export function productionDependencyProblems(manifests: readonly Manifest[], lock: Lockfile): string[] {
  const problems: string[] = [];
  for (const manifest of manifests) {
    for (const field of PRODUCTION_FIELDS) {
      for (const dep of Object.keys(manifest[field] ?? {})) {
        if (isTestOnly(dep)) problems.push(`${manifest.name} lists ${dep} in ${field}: test tooling belongs in devDependencies`);
      }
    }
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = packageNameOf(path);
    if (name === undefined || entry.link === true || !isTestOnly(name)) continue;
    if (entry.dev !== true) problems.push(`npm ci --omit=dev would install ${name} (${path} is not marked dev in package-lock.json)`);
  }
  return problems;
}

/** The root manifest and every workspace's (`libs/*`, `services/*`). */
export function readManifests(root: string): Manifest[] {
  const read = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
  const rootManifest = read(root) as Manifest & { workspaces?: string[] };
  const manifests: Manifest[] = [rootManifest];
  for (const pattern of rootManifest.workspaces ?? []) {
    const parent = pattern.replace(/\/\*$/, "");
    for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) {
      const dir = join(root, parent, entry.name);
      if (entry.isDirectory() && existsSync(join(dir, "package.json"))) manifests.push(read(dir));
    }
  }
  return manifests;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as Lockfile;
  const problems = productionDependencyProblems(readManifests("."), lock);
  if (problems.length > 0) {
    console.error(`Test tooling reaches production dependencies:\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log("production dependencies hold no test tooling");
}
