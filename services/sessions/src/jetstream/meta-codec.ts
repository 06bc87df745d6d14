import type { SessionMeta } from "../model.js";

/** Session metadata as the KV bucket stores it: JSON. */
export const encodeMeta = (meta: SessionMeta) => Buffer.from(JSON.stringify(meta), "utf8");

/** Undefined for a value that is not JSON. */
export function decodeMeta(value: Uint8Array): SessionMeta | undefined {
  try {
    return JSON.parse(Buffer.from(value).toString("utf8")) as SessionMeta;
  } catch {
    return undefined;
  }
}
