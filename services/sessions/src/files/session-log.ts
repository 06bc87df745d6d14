import { open } from "node:fs/promises";
import { decodeBatch } from "../storage/batch-codec.js";
import type { StoredEntry } from "../model.js";
import { recordsBackward, scanForward } from "./file-log.js";

/**
 * One session's log file, read and written whole records at a time (framing: file-log.ts). The
 * repository says where the intact records end (`size`) and which generation is the session's:
 * records of an earlier session under the same key are skipped.
 */

/** Appends a framed record with fdatasync; on failure cuts the file back to `size`, so no half record stays. */
export async function appendRecord(path: string, frame: Buffer, size: number): Promise<void> {
  const fh = await open(path, "a", 0o600);
  try {
    await fh.write(frame);
    await fh.datasync();
  } catch (err) {
    // Never leave half a record in front of the next one.
    await fh.truncate(size).catch(() => {});
    throw err;
  } finally {
    await fh.close();
  }
}

/** A new log holding one framed record, synced; the file must not exist yet. */
export async function writeNewLog(path: string, frame: Buffer): Promise<void> {
  const fh = await open(path, "wx", 0o600);
  try {
    await fh.write(frame);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The newest `limit` entries of generation `gen`, newest first; `complete` when that is the whole branch. */
export async function readTail(path: string, size: number, gen: string, limit: number): Promise<{ entries: StoredEntry[]; complete: boolean }> {
  const entries: StoredEntry[] = [];
  if (size === 0) return { entries, complete: true };
  const fh = await open(path, "r");
  try {
    for await (const record of recordsBackward(fh, size)) {
      const batch = decodeBatch(record.payload);
      if (!batch || batch.gen !== gen) break;
      for (let i = batch.entries.length - 1; i >= 0 && entries.length < limit; i--) entries.push(batch.entries[i]!);
      if (entries.length >= limit) return { entries, complete: false };
      if (batch.base) break;
    }
  } finally {
    await fh.close();
  }
  return { entries, complete: true };
}

/** The current branch of generation `gen`, oldest first: the entries since its newest base batch. */
export async function readBranch(path: string, size: number, gen: string): Promise<StoredEntry[]> {
  let entries: StoredEntry[] = [];
  if (size === 0) return entries;
  const fh = await open(path, "r");
  try {
    const { records } = await scanForward(fh, 0, size);
    for (const record of records) {
      const batch = decodeBatch(record.payload);
      if (!batch || batch.gen !== gen) continue;
      if (batch.base) entries = [];
      entries.push(...batch.entries);
    }
  } finally {
    await fh.close();
  }
  return entries;
}
