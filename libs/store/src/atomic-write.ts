import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temp files start with "." so directory listings of keys can skip them. */
export const TEMP_SUFFIX = ".tmp";

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Write to a temp file, fsync, rename over the target, fsync the directory: after a crash the
 * target holds either the old or the new bytes, never a torn mix, and the rename is on disk.
 */
export async function writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`);
  const handle = await open(temp, "wx", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
}
