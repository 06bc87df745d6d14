import type { z } from "zod";
import { describeIssues } from "./describe-issues.js";

export type StoredRead<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * JSON a service stored itself (a durable KV entry, a FastStore value, a file), read back
 * through the schema of what it wrote: never a cast. A record that does not decode (a bug, a
 * torn write, a hand edit, an older format) is not thrown: the reader says what it does with it
 * (logs and skips, drops, starts fresh), so one bad record cannot stop a loop over the rest.
 */
export function readStoredJson<S extends z.ZodType>(stored: string | Uint8Array, schema: S): StoredRead<z.output<S>> {
  let value: unknown;
  try {
    value = JSON.parse(typeof stored === "string" ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString("utf8"));
  } catch (err) {
    return { ok: false, problem: `not JSON (${(err as Error).message})` };
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: describeIssues(parsed.error, "record") };
}
