import type { Batch } from "../model.js";

/** Batches are stored as JSON: readable with `nats stream get` or `less`, and small enough. */
export function encodeBatch(batch: Batch): Uint8Array {
  return Buffer.from(JSON.stringify(batch), "utf8");
}

/** Undefined for bytes that are not a batch (a torn or foreign record). */
export function decodeBatch(bytes: Uint8Array): Batch | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const b = value as Partial<Batch>;
  if (typeof b.gen !== "string" || typeof b.count !== "number" || !Array.isArray(b.entries)) return undefined;
  return {
    gen: b.gen,
    base: b.base === true,
    count: b.count,
    at: typeof b.at === "number" ? b.at : 0,
    entries: b.entries,
  };
}
