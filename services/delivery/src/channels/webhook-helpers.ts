/**
 * What every webhook endpoint (a plugin's `inbound`) shares: its replies, a constant-time
 * secret comparison, and reading the raw body as JSON. Replies are small JSON bodies; a refusal
 * names what was wrong and never echoes a secret.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { InboundMessage, InboundReply, InboundResult, RawInbound } from "@gw/channels";

export function jsonReply(status: number, body: Record<string, unknown>): InboundReply {
  return { status, headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify(body) };
}

/** Accepted: the platform gets 200 and the messages go to the store. */
export function accepted(messages: InboundMessage[], body: Record<string, unknown> = { ok: true }): InboundResult {
  return { reply: jsonReply(200, body), messages };
}

/** Refused with `status` and why; nothing is stored. */
export function refused(status: number, error: string): InboundResult {
  return { reply: jsonReply(status, { ok: false, error }), messages: [] };
}

/** Equal strings, compared in time that does not depend on where they differ. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Lower-case hex HMAC-SHA256 of `parts` joined, with `secret`. */
export function hmacHex(secret: string, ...parts: Array<string | Uint8Array>): string {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return mac.digest("hex");
}

/** The body as JSON, or undefined when it is not JSON. */
export function jsonBody(req: RawInbound): unknown {
  try {
    return JSON.parse(Buffer.from(req.body).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** The webhook route of every channel: `/api/channels/<id>/webhook` (and `/<accountId>/webhook`). */
export const WEBHOOK_PATH = "/webhook";
