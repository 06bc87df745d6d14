import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { readStoredJson } from "@gw/contracts";
import { z } from "zod";
import { withHistory } from "../storage/meta-update.js";
import { type SessionMeta, SessionMetaSchema, type Tip, tipOf } from "../model.js";
import { LOG_SUFFIX, META_SUFFIX } from "./file-names.js";
import { recoverLog } from "./file-recovery.js";

/** The metadata file: the session's settings, its live log, and how far that log was known intact. */
export interface MetaFile {
  meta: SessionMeta;
  log: string;
  checkpoint: number;
}

const MetaFileSchema = z.object({ meta: SessionMetaSchema, log: z.string(), checkpoint: z.number() }) satisfies z.ZodType<MetaFile>;

/** Told of a metadata file that does not decode: that session is not loaded, and its file stays. */
export type CorruptMetaFile = (file: string, problem: string) => void;

/** A session as the file repository holds it in memory. */
export interface Slot extends MetaFile {
  base: string;
  size: number;
  /**
   * Where the history ends: all an append or a replace needs of its last batch. The batch itself
   * stays on disk (100,000 sessions would each keep their newest entries in memory).
   */
  tip: Tip;
  sinceCheckpoint: number;
  /** Counts this process's writes to the history: the version the tail cache is checked against. */
  version: number;
}

/**
 * Recovers every session of `dir` (one read each unless its tail is torn), handing each to
 * `loaded`, then drops what a crash left behind: temporary files and logs no metadata names. A
 * metadata file that does not decode is skipped (told to `corrupt`), and then no log is dropped:
 * the one it names cannot be told from a stray.
 */
export async function loadSlots(dir: string, loaded: (slot: Slot) => void, corrupt?: CorruptMetaFile): Promise<void> {
  const names = await readdir(dir);
  const live = new Set<string>();
  const metas = names.filter((name) => !name.startsWith(".") && name.endsWith(META_SUFFIX));
  // A few files at a time: 10,000 sessions must not make start-up wait on 10,000 serial reads.
  let next = 0;
  let unreadable = false;
  const worker = async () => {
    while (next < metas.length) {
      const name = metas[next++]!;
      const slot = await loadSlot(dir, name, (problem) => {
        unreadable = true;
        corrupt?.(name, problem);
      });
      if (slot === undefined) continue;
      loaded(slot);
      live.add(slot.log);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  for (const name of names) {
    const stray = name.startsWith(".") || (name.endsWith(LOG_SUFFIX) && !unreadable && !live.has(name));
    if (stray) await rm(join(dir, name), { force: true });
  }
}

async function loadSlot(dir: string, name: string, corrupt: (problem: string) => void): Promise<Slot | undefined> {
  const read = readStoredJson(await readFile(join(dir, name), "utf8"), MetaFileSchema);
  if (!read.ok) {
    corrupt(read.problem);
    return undefined;
  }
  const file = read.value;
  const recovered = await recoverLog(join(dir, file.log), file.checkpoint);
  const tip = tipOf(recovered.last, file.meta.gen);
  return {
    ...file,
    meta: withHistory(file.meta, tip, recovered.last?.at ?? 0),
    base: name.slice(0, -META_SUFFIX.length),
    size: recovered.size,
    tip,
    sinceCheckpoint: 0,
    version: 0,
  };
}
