import { createHash, randomBytes } from "node:crypto";

/**
 * File names for session keys: base64url (no `/`, no leading `.`, same on every file system),
 * or `~<sha256>` when that would pass a safe name length. The metadata file holds the real key.
 */
const MAX_PLAIN = 150;

export function baseNameForKey(key: string): string {
  const plain = Buffer.from(key, "utf8").toString("base64url");
  return plain.length <= MAX_PLAIN ? plain : `~${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

export const META_SUFFIX = ".meta";
export const LOG_SUFFIX = ".log";

/** Every history (creation, reset, compaction) gets a fresh log file; the metadata file names the live one. */
export function newLogName(base: string): string {
  return `${base}.${randomBytes(6).toString("hex")}${LOG_SUFFIX}`;
}
