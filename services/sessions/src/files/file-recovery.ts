import { open } from "node:fs/promises";
import { decodeBatch } from "../storage/batch-codec.js";
import { recordEndingAt, scanForward } from "./file-log.js";
import type { Batch } from "../model.js";

export interface RecoveredLog {
  /** Where the intact records end; the file is truncated there. */
  size: number;
  last: Batch | undefined;
}

/**
 * Finds the intact end of a session log after a crash. The usual case costs one read: the record
 * ending at the end of the file checks out. Otherwise the tail is torn (a write cut short, or
 * zeros from a crash before the data reached the disk): scan forward from the last checkpoint,
 * which was intact when it was written, and cut the file after the last intact record.
 */
export async function recoverLog(path: string, checkpoint: number): Promise<RecoveredLog> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, "r+");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { size: 0, last: undefined };
    throw err;
  }
  try {
    const { size } = await fh.stat();
    if (size === 0) return { size: 0, last: undefined };
    const tail = await recordEndingAt(fh, size);
    const tailBatch = tail && decodeBatch(tail.payload);
    if (tailBatch !== undefined) return { size, last: tailBatch };
    const from = checkpoint <= size ? checkpoint : 0;
    const { records, validEnd } = await scanForward(fh, from, size);
    let lastRecord = records.at(-1);
    if (lastRecord === undefined && from > 0) lastRecord = await recordEndingAt(fh, from);
    await fh.truncate(validEnd);
    await fh.sync();
    return { size: validEnd, last: lastRecord && decodeBatch(lastRecord.payload) };
  } finally {
    await fh.close();
  }
}
