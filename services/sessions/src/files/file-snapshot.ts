import { type FileHandle, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { readStoredJson } from "@gw/contracts";
import { fsyncDir, writeFileAtomic } from "@gw/store";
import { z } from "zod";
import { EMPTY_TIP, type Tip } from "../model.js";
import type { Slot } from "./file-slots.js";

/**
 * Every session of the store as of a clean close, in one file: the next start reads it instead
 * of every metadata file and log tail (100,000 sessions: one read instead of 100,000 opens).
 *
 * It is only true while nothing has written to the directory since the close, so the store
 * removes it (durably) as it opens, before its first write: after a crash there is none, and the
 * start scans every file as before. The leading "." makes an older gateway, which knows nothing
 * of snapshots, delete it at start (it drops every dot file as a temp file), so a snapshot never
 * outlives a run that did not maintain it. Files changed by hand need the gateway stopped and this
 * file deleted.
 */
export const SNAPSHOT_NAME = ".snapshot";

const FORMAT = "gw-sessions-snapshot/1";

/** The first line: which format, how many sessions, and the CRC-32 of the bytes after this line. */
const HeaderSchema = z.object({ format: z.literal(FORMAT), count: z.number(), crc: z.number() });

/**
 * Sessions per line after the header. Read a line at a time into one buffer, the start never
 * holds much more than the sessions themselves (the whole file parsed at once left 20-40 MiB more
 * resident at 100,000), and a line's garbage stays small enough to die young.
 */
const BLOCK = 256;
const READ_BUFFER = 64 * 1024;
const NEWLINE = Buffer.from("\n");

const strings = z.array(z.string());
const numbers = z.array(z.number());
/** An index into `values` per session: settings most sessions share are stored (and kept) once. */
const shared = z.object({ values: strings, at: numbers });

/**
 * A line is one JSON object of columns, one array per field with an element per session: 100,000
 * sessions parse in half the time 100,000 objects take, from half the bytes.
 */
const ColumnsSchema = z.object({
  key: strings,
  agentId: shared,
  model: shared,
  thinking: shared,
  createdAt: numbers,
  updatedAt: numbers,
  messageCount: numbers,
  leafId: strings,
  gen: strings,
  historySeq: numbers,
  base: strings,
  log: strings,
  checkpoint: numbers,
  size: numbers,
  tipCount: numbers,
  tipLeafId: strings,
});
type Columns = z.infer<typeof ColumnsSchema>;

export type SnapshotRead = { kind: "absent" } | { kind: "bad"; problem: string } | { kind: "ok"; slots: Slot[] };

function sharedColumn(values: string[]): { values: string[]; at: number[] } {
  const seen = new Map<string, number>();
  const at = values.map((value) => {
    let i = seen.get(value);
    if (i === undefined) seen.set(value, (i = seen.size));
    return i;
  });
  return { values: [...seen.keys()], at };
}

function columnsOf(slots: Slot[]): Columns {
  const meta = <K extends keyof Slot["meta"]>(field: K) => slots.map((slot) => slot.meta[field]);
  return {
    key: meta("key"),
    agentId: sharedColumn(meta("agentId")),
    model: sharedColumn(meta("model")),
    thinking: sharedColumn(meta("thinking")),
    createdAt: meta("createdAt"),
    updatedAt: meta("updatedAt"),
    messageCount: meta("messageCount"),
    leafId: meta("leafId"),
    gen: meta("gen"),
    historySeq: meta("historySeq"),
    base: slots.map((slot) => slot.base),
    log: slots.map((slot) => slot.log),
    checkpoint: slots.map((slot) => slot.checkpoint),
    size: slots.map((slot) => slot.size),
    tipCount: slots.map((slot) => slot.tip.count),
    tipLeafId: slots.map((slot) => slot.tip.leafId),
  };
}

/** Adds the slots the columns describe to `slots`, or says why the columns do not make sessions. */
function addSlots(slots: Slot[], c: Columns): string | undefined {
  const count = c.key.length;
  for (const [name, column] of Object.entries(c)) {
    const length = Array.isArray(column) ? column.length : column.at.length;
    if (length !== count) return `column ${name} has ${length} values for ${count} sessions`;
  }
  const pick = (column: { values: string[]; at: number[] }, i: number) => column.values[column.at[i]!];
  for (let i = 0; i < count; i++) {
    const [agentId, model, thinking] = [pick(c.agentId, i), pick(c.model, i), pick(c.thinking, i)];
    if (agentId === undefined || model === undefined || thinking === undefined) return `session ${i} names a shared value that is not there`;
    const leafId = c.leafId[i]!;
    const tip: Tip = c.tipCount[i] === 0 && c.tipLeafId[i] === "" ? EMPTY_TIP : { count: c.tipCount[i]!, leafId: c.tipLeafId[i] === leafId ? leafId : c.tipLeafId[i]! };
    slots.push({
      meta: {
        key: c.key[i]!,
        agentId,
        model,
        thinking,
        createdAt: c.createdAt[i]!,
        updatedAt: c.updatedAt[i]!,
        messageCount: c.messageCount[i]!,
        leafId,
        gen: c.gen[i]!,
        historySeq: c.historySeq[i]!,
      },
      base: c.base[i]!,
      log: c.log[i]!,
      checkpoint: c.checkpoint[i]!,
      size: c.size[i]!,
      // Most sessions of a large store are empty: they share one tip.
      tip,
      sinceCheckpoint: 0,
      version: 0,
    });
  }
  return undefined;
}

/**
 * The lines of a file, without their "\n" (a last line without one too), read through one buffer
 * that grows only for a line longer than it: no allocation per read. A line is only valid until
 * the next one is asked for.
 */
async function* linesOf(fh: FileHandle): AsyncGenerator<Buffer> {
  let buf = Buffer.allocUnsafe(READ_BUFFER);
  let filled = 0;
  for (;;) {
    if (filled === buf.length) buf = Buffer.concat([buf], buf.length * 2);
    const { bytesRead } = await fh.read(buf, filled, buf.length - filled, null);
    if (bytesRead === 0) break;
    filled += bytesRead;
    const data = buf.subarray(0, filled);
    let start = 0;
    for (let end = data.indexOf(0x0a); end >= 0; end = data.indexOf(0x0a, start)) {
      yield data.subarray(start, end);
      start = end + 1;
    }
    buf.copy(buf, 0, start, filled);
    filled -= start;
  }
  if (filled > 0) yield buf.subarray(0, filled);
}

/** Writes the snapshot atomically (temp file, fsync, rename, fsync of the directory). */
export async function writeSnapshot(dir: string, slots: Slot[]): Promise<void> {
  const lines: string[] = [];
  for (let i = 0; i < slots.length; i += BLOCK) lines.push(`${JSON.stringify(columnsOf(slots.slice(i, i + BLOCK)))}\n`);
  const body = Buffer.from(lines.join(""), "utf8");
  const header = Buffer.from(`${JSON.stringify({ format: FORMAT, count: slots.length, crc: crc32(body) })}\n`, "utf8");
  await writeFileAtomic(join(dir, SNAPSHOT_NAME), Buffer.concat([header, body]));
}

/** The sessions of the snapshot, or why it cannot be trusted (torn, foreign, another format). */
export async function readSnapshot(dir: string): Promise<SnapshotRead> {
  let fh: FileHandle;
  try {
    fh = await open(join(dir, SNAPSHOT_NAME), "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
    throw err;
  }
  let header: z.infer<typeof HeaderSchema> | undefined;
  let crc = 0;
  const slots: Slot[] = [];
  try {
    for await (const line of linesOf(fh)) {
      if (header === undefined) {
        const read = readStoredJson(line, HeaderSchema);
        if (!read.ok) return { kind: "bad", problem: `header: ${read.problem}` };
        header = read.value;
        continue;
      }
      crc = crc32(NEWLINE, crc32(line, crc));
      const columns = readStoredJson(line, ColumnsSchema);
      if (!columns.ok) return { kind: "bad", problem: `sessions ${slots.length} on: ${columns.problem}` };
      const problem = addSlots(slots, columns.value);
      if (problem !== undefined) return { kind: "bad", problem: `sessions ${slots.length} on: ${problem}` };
    }
  } finally {
    await fh.close();
  }
  if (header === undefined) return { kind: "bad", problem: "empty" };
  if (crc !== header.crc) return { kind: "bad", problem: "checksum mismatch" };
  if (slots.length !== header.count) return { kind: "bad", problem: `${slots.length} sessions, the header says ${header.count}` };
  return { kind: "ok", slots };
}

/** Removes the snapshot for good (the directory is synced), whether or not there was one. */
export async function dropSnapshot(dir: string): Promise<void> {
  try {
    await unlink(join(dir, SNAPSHOT_NAME));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await fsyncDir(dir);
}
