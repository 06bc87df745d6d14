import { open } from "node:fs/promises";

/**
 * One key per file: a JSON header line `{"rev":N,"key":"..."}` then the raw value bytes.
 * JSON escapes newlines, so the first "\n" always ends the header.
 */
export interface FileRecord {
  key: string;
  revision: number;
  value: Uint8Array;
}

const NEWLINE = 0x0a;

export function encodeRecord(record: FileRecord): Uint8Array {
  const header = Buffer.from(`${JSON.stringify({ rev: record.revision, key: record.key })}\n`, "utf8");
  return Buffer.concat([header, record.value]);
}

function parseHeader(bytes: Buffer, path: string): { key: string; revision: number } {
  const parsed = JSON.parse(bytes.toString("utf8")) as { rev?: unknown; key?: unknown };
  if (typeof parsed.rev !== "number" || typeof parsed.key !== "string") {
    throw new Error(`corrupt store file ${path}: bad header`);
  }
  return { key: parsed.key, revision: parsed.rev };
}

export function decodeRecord(bytes: Buffer, path: string): FileRecord {
  const end = bytes.indexOf(NEWLINE);
  if (end < 0) throw new Error(`corrupt store file ${path}: no header`);
  const header = parseHeader(bytes.subarray(0, end), path);
  // Copy so callers never hold a view into a pooled Buffer.
  return { ...header, value: new Uint8Array(bytes.subarray(end + 1)) };
}

/** Reads just the header, for scans that must not load every value into memory. */
export async function readHeader(path: string): Promise<{ key: string; revision: number }> {
  const handle = await open(path, "r");
  try {
    let header = Buffer.alloc(0);
    const chunk = Buffer.alloc(4_096);
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, header.length);
      if (bytesRead === 0) throw new Error(`corrupt store file ${path}: no header`);
      const end = chunk.subarray(0, bytesRead).indexOf(NEWLINE);
      if (end >= 0) return parseHeader(Buffer.concat([header, chunk.subarray(0, end)]), path);
      header = Buffer.concat([header, chunk.subarray(0, bytesRead)]);
    }
  } finally {
    await handle.close();
  }
}
