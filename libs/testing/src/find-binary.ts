import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * Looks a program up on PATH the way a shell would, without running it: spawning a missing
 * binary only fails asynchronously, which would blur "not installed" with "crashed at start".
 */
export function findBinary(name: string, pathVar: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
