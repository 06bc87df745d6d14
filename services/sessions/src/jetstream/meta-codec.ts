import { readStoredJson } from "@gw/contracts";
import { type SessionMeta, SessionMetaSchema } from "../model.js";

/** Session metadata as the KV bucket stores it: JSON. */
export const encodeMeta = (meta: SessionMeta) => Buffer.from(JSON.stringify(meta), "utf8");

/**
 * Undefined for a value that does not decode as SessionMeta (its readers take it for no
 * session); `corrupt` hears why, for a log.
 */
export function decodeMeta(value: Uint8Array, corrupt?: (problem: string) => void): SessionMeta | undefined {
  const read = readStoredJson(value, SessionMetaSchema);
  if (read.ok) return read.value;
  corrupt?.(read.problem);
  return undefined;
}
