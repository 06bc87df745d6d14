import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encodeBatch } from "../storage/batch-codec.js";
import { withHistory } from "../storage/meta-update.js";
import { type Batch, tipOf } from "../model.js";
import { newestFirst } from "../list-index/session-index.js";
import type { NewSession } from "../repository.js";
import { frameRecord } from "./file-log.js";
import { baseNameForKey, META_SUFFIX, newLogName } from "./file-names.js";
import { type CorruptMetaFile, loadSlots, type MetaFile, type Slot } from "./file-slots.js";
import { dropSnapshot, readSnapshot } from "./file-snapshot.js";

/** How the store found the sessions at start: the snapshot of a clean close, or every file (and why). */
export type StoreLoad = { from: "snapshot"; sessions: number } | { from: "files"; sessions: number; why: string };

/**
 * Every session of `dir` at start, newest first: from a clean close's snapshot when there is a
 * usable one, else from every metadata file and log. The snapshot is gone from the disk before
 * this returns: stale from the store's first write on, so a crash from then on leaves none and
 * the next start reads every file.
 */
export async function loadStore(dir: string, onCorruptMeta?: CorruptMetaFile): Promise<{ slots: Slot[]; load: StoreLoad }> {
  await mkdir(dir, { recursive: true });
  const snapshot = await readSnapshot(dir);
  if (snapshot.kind !== "absent") await dropSnapshot(dir);
  let slots: Slot[];
  let load: StoreLoad;
  if (snapshot.kind === "ok") {
    slots = snapshot.slots;
    load = { from: "snapshot", sessions: slots.length };
  } else {
    slots = [];
    await loadSlots(dir, (slot) => slots.push(slot), onCorruptMeta);
    const why = snapshot.kind === "absent" ? "no snapshot (the last run did not close cleanly)" : `snapshot unusable: ${snapshot.problem}`;
    load = { from: "files", sessions: slots.length, why };
  }
  // Newest first, so each goes in at the end of the list index's sorted arrays: no memory moves.
  slots.sort((a, b) => newestFirst(a.meta, b.meta));
  return { slots, load };
}

/**
 * Writes a new session's log (its history as one base batch) and metadata file, without an
 * fsync (an import syncs the directory once at its end): the slot that describes them.
 */
export async function writeImported(dir: string, { meta, entries }: NewSession): Promise<Slot> {
  const base = baseNameForKey(meta.key);
  const log = newLogName(base);
  const batch: Batch = { gen: meta.gen, base: true, count: entries.length, at: meta.updatedAt, entries };
  const frame = entries.length > 0 ? frameRecord(encodeBatch(batch)) : Buffer.alloc(0);
  if (frame.length > 0) await writeFile(join(dir, log), frame, { mode: 0o600 });
  const tip = tipOf(frame.length > 0 ? batch : undefined, meta.gen);
  const slot: Slot = { meta: withHistory(meta, tip, meta.updatedAt), log, checkpoint: frame.length, base, size: frame.length, tip, sinceCheckpoint: 0, version: 0 };
  const file: MetaFile = { meta: slot.meta, log, checkpoint: slot.size };
  await writeFile(join(dir, `${base}${META_SUFFIX}`), JSON.stringify(file), { mode: 0o600, flag: "wx" });
  return slot;
}
