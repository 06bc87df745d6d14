/**
 * What a plugin's settings schema is made of (DESIGN §7): the keys every kind accepts and the
 * value types platforms share (non-empty text, http(s) base URLs, E.164 phone numbers). Each
 * plugin's folder holds its own schema, `z.strictObject({ ...COMMON_SETTINGS, ...its keys })`,
 * validated per account after the channel's keys and the account's own have been merged
 * (channel-accounts.ts). Strict, so a misspelt key fails at start instead of doing nothing.
 */
import { QueueSchema } from "@gw/config";
import { z } from "zod";

/** Text that is not empty once trimmed; `what` names the key in the message. */
export const nonEmpty = (what: string) => z.string().trim().min(1, `${what} must not be empty`);

/** An http(s) URL, trailing slashes dropped (a base URL paths are appended to). */
export const httpUrl = (what: string) =>
  z
    .string()
    .refine((value) => isHttpUrl(value), `${what} must be an http(s) URL`)
    .transform((value) => value.replace(/\/+$/, ""));

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

export const E164 = /^\+[1-9]\d{6,14}$/;

/** Separators people write phone numbers with: "+1 (555) 000-1111", "+49.30.1234567". */
const PHONE_SEPARATORS = /[\s().-]/g;

/**
 * A phone number in E.164, from the ways people and platforms write one: separators dropped,
 * and bare digits (WhatsApp's `wa_id`, the number without its '+') given their '+'. Undefined
 * when the text is not a phone number.
 */
export function toE164(text: string): string | undefined {
  const compact = text.trim().replace(PHONE_SEPARATORS, "");
  const e164 = /^\d+$/.test(compact) ? `+${compact}` : compact;
  return E164.test(e164) ? e164 : undefined;
}

const ACCOUNT_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `allowFrom` where senders are phone numbers: "*", or a number normalised to E.164, the form
 * inbound senders take, so "15550001111" and "+1 555 000 1111" match the sender +15550001111.
 * `uuids`: the platform also names a sender whose number is hidden by an account UUID (lowercased).
 */
export function phoneAllowFrom(expected: string, opts: { uuids?: boolean } = {}) {
  const entry = z.string().transform((text, ctx) => {
    if (text.trim() === "*") return "*";
    const phone = toE164(text);
    if (phone !== undefined) return phone;
    if (opts.uuids === true && ACCOUNT_UUID.test(text.trim())) return text.trim().toLowerCase();
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(text)} is not ${expected}` });
    return z.NEVER;
  });
  return z.array(entry).default([]);
}

/** Who may talk to the agent through a channel's inbound side (default "pairing"). */
export const DmPolicySchema = z.enum(["pairing", "allowlist", "open", "disabled"]);
export type DmPolicy = z.output<typeof DmPolicySchema>;

/** Keys every kind accepts: spread them first into a plugin's strict object. */
export const COMMON_SETTINGS = {
  dmPolicy: DmPolicySchema.default("pairing"),
  /** Platform sender ids, or "*" for everyone; WhatsApp and Signal take phone numbers (phoneAllowFrom). */
  allowFrom: z.array(nonEmpty("an allowFrom entry")).default([]),
  /** The agent that answers inbound messages (default: agents.default). */
  agent: nonEmpty("agent").optional(),
  /** In groups the agent answers only when the bot is mentioned (or replied to), unless false. */
  groups: z.strictObject({ requireMention: z.boolean().default(true) }).optional(),
  /** Messages that arrive while the agent answers (a binding's `queue` wins); default followup. */
  queue: QueueSchema.optional(),
};

/** The common keys as a plugin's `create` and delivery's inbound policy read them. */
export type CommonChannelSettings = z.output<z.ZodObject<typeof COMMON_SETTINGS>>;
