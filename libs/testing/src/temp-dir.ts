import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A directory the harness may delete: either one it made, or nothing (caller-owned dirs stay). */
export interface ManagedDir {
  path: string;
  ensure(): Promise<void>;
  remove(): Promise<void>;
}

export async function managedDir(prefix: string, given: string | undefined): Promise<ManagedDir> {
  const owned = given === undefined;
  const path = given ?? (await mkdtemp(join(tmpdir(), prefix)));
  return {
    path,
    ensure: async () => {
      await mkdir(path, { recursive: true });
    },
    remove: async () => {
      if (owned) await rm(path, { recursive: true, force: true });
    },
  };
}
