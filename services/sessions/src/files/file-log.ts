import type { FileHandle } from "node:fs/promises";
import { crc32 } from "node:zlib";

/**
 * Framing of the append-only session logs: `[len u32][crc32 u32][payload][len u32]`, big-endian.
 * The trailing length lets a reader walk the log backwards from its end (preview reads only the
 * tail); the checksum tells a torn or zero-filled tail (a crash mid-write) from a real record.
 */
const HEAD = 8;
const TRAIL = 4;
export const FRAME_OVERHEAD = HEAD + TRAIL;

export function frameRecord(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(payload.length + FRAME_OVERHEAD);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(crc32(payload), 4);
  out.set(payload, HEAD);
  out.writeUInt32BE(payload.length, HEAD + payload.length);
  return out;
}

export interface LogRecord {
  start: number;
  end: number;
  payload: Buffer;
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer | undefined> {
  if (position < 0 || length < 0) return undefined;
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return bytesRead === length ? buf : undefined;
}

function checked(frame: Buffer, start: number): LogRecord | undefined {
  const len = frame.readUInt32BE(0);
  if (len === 0 || frame.length !== len + FRAME_OVERHEAD) return undefined;
  if (frame.readUInt32BE(HEAD + len) !== len) return undefined;
  const payload = frame.subarray(HEAD, HEAD + len);
  if (crc32(payload) !== frame.readUInt32BE(4)) return undefined;
  return { start, end: start + frame.length, payload };
}

/** The intact record that ends exactly at `end`, or undefined (start of file, torn or foreign bytes). */
export async function recordEndingAt(fh: FileHandle, end: number): Promise<LogRecord | undefined> {
  if (end < FRAME_OVERHEAD + 1) return undefined;
  const trailer = await readAt(fh, end - TRAIL, TRAIL);
  if (trailer === undefined) return undefined;
  const len = trailer.readUInt32BE(0);
  const start = end - len - FRAME_OVERHEAD;
  if (len === 0 || start < 0) return undefined;
  const frame = await readAt(fh, start, len + FRAME_OVERHEAD);
  return frame === undefined ? undefined : checked(frame, start);
}

/** Intact records from `from` on; stops at the first torn one. `validEnd` is where the intact part ends. */
export async function scanForward(
  fh: FileHandle,
  from: number,
  size: number,
): Promise<{ records: LogRecord[]; validEnd: number }> {
  const records: LogRecord[] = [];
  const all = await readAt(fh, from, size - from);
  if (all === undefined) return { records, validEnd: from };
  let at = 0;
  while (at + FRAME_OVERHEAD < all.length + 1) {
    if (at + HEAD > all.length) break;
    const len = all.readUInt32BE(at);
    if (at + len + FRAME_OVERHEAD > all.length) break;
    const record = checked(all.subarray(at, at + len + FRAME_OVERHEAD), from + at);
    if (record === undefined) break;
    records.push(record);
    at += len + FRAME_OVERHEAD;
  }
  return { records, validEnd: from + at };
}

const WINDOW = 64 * 1024;

/**
 * Intact records ending at `end`, newest first, read in 64 KiB windows from the end: a preview of
 * the last 20 messages costs one read however long the log is. Stops at a torn or foreign record.
 */
export async function* recordsBackward(fh: FileHandle, end: number): AsyncGenerator<LogRecord> {
  let winStart = 0;
  let win: Buffer | undefined;
  const load = async (from: number) => {
    winStart = from;
    win = await readAt(fh, from, end - from);
  };
  await load(Math.max(0, end - WINDOW));
  while (win !== undefined && end >= FRAME_OVERHEAD + 1) {
    if (end - winStart < TRAIL) {
      await load(Math.max(0, end - WINDOW));
      continue;
    }
    const len = win.readUInt32BE(end - winStart - TRAIL);
    const start = end - len - FRAME_OVERHEAD;
    if (len === 0 || start < 0) return;
    if (start < winStart) {
      // The record reaches past the window: read one that holds it whole.
      await load(start);
      continue;
    }
    const record = checked(win.subarray(start - winStart, end - winStart), start);
    if (record === undefined) return;
    yield record;
    end = start;
  }
}
