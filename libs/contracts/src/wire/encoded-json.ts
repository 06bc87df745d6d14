import type { z } from "zod";
import { GatewayError } from "../errors.js";

declare const encodes: unique symbol;

/**
 * Client-facing JSON, already encoded: the UTF-8 text of a `T`, written once by the service
 * that produced the value and spliced unparsed into every frame that carries it (a preview
 * answer, an event's payload). This is the one way pre-encoded JSON travels; docs/decisions.md
 * ("Pre-encoded client JSON") says why it exists and what it saves. The brand keeps plain bytes
 * out: a value becomes EncodedJson only through `encodeJson` (its producer) or `receivedJson`
 * (a bus field whose proto comment names it EncodedJson of `T`).
 */
export type EncodedJson<T> = Buffer & { readonly [encodes]: T };

/** The producer's side: `value` as JSON, once. */
export function encodeJson<T>(value: T): EncodedJson<T> {
  return Buffer.from(JSON.stringify(value), "utf8") as EncodedJson<T>;
}

/**
 * A bus message's EncodedJson field as it arrived (a view, no copy). The sending service wrote
 * it with `encodeJson`; a reader that needs the value itself decodes it with `decodeJson`.
 */
export function receivedJson<T>(bytes: Uint8Array): EncodedJson<T> {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view as EncodedJson<T>;
}

export function isEncodedJson(value: unknown): value is EncodedJson<unknown> {
  return Buffer.isBuffer(value);
}

/** JSON carried inside a bus message, parsed but not yet checked: INTERNAL when it is not JSON. */
export function parseJsonBytes(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (cause) {
    throw new GatewayError("INTERNAL", `malformed ${what}`, { cause });
  }
}

/**
 * JSON carried inside a bus message, read through the schema of what it must be: never a cast.
 * A malformed value is the sender's bug, so it is INTERNAL (the cause names the problem).
 */
export function decodeJson<S extends z.ZodType>(bytes: Uint8Array, schema: S, what: string): z.output<S> {
  const parsed = schema.safeParse(parseJsonBytes(bytes, what));
  if (!parsed.success) throw new GatewayError("INTERNAL", `malformed ${what}`, { cause: parsed.error });
  return parsed.data;
}

/**
 * `head` + `json` + `tail` in one buffer of the exact size: how a frame is built around
 * EncodedJson without parsing it or encoding its text again. A head that changes per frame (a
 * response id) can be given as text: it is written straight into the frame.
 */
export function spliceJson(head: string | Buffer, json: EncodedJson<unknown>, tail: Buffer): Buffer {
  const headLength = typeof head === "string" ? Buffer.byteLength(head, "utf8") : head.length;
  const out = Buffer.allocUnsafe(headLength + json.length + tail.length);
  if (typeof head === "string") out.write(head, 0, "utf8");
  else head.copy(out, 0);
  json.copy(out, headLength);
  tail.copy(out, headLength + json.length);
  return out;
}
