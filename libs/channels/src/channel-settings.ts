/**
 * The settings each channel kind accepts (DESIGN §7), validated per account after the channel's
 * keys and the account's own have been merged (channel-accounts.ts). Strict, so a misspelt key
 * fails at start instead of silently doing nothing; a plugin that needs more keys extends its
 * schema here, keeping every key DESIGN names.
 */
import { QueueSchema } from "@gw/config";
import { z } from "zod";

const nonEmpty = (what: string) => z.string().trim().min(1, `${what} must not be empty`);

const httpUrl = (what: string) =>
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

const SIGNAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `allowFrom` where senders are phone numbers: "*", or a number normalised to E.164, the form
 * inbound senders take, so "15550001111" and "+1 555 000 1111" match the sender +15550001111.
 * `uuids`: Signal also names a sender whose number is hidden by its account UUID.
 */
function phoneAllowFrom(expected: string, opts: { uuids?: boolean } = {}) {
  const entry = z.string().transform((text, ctx) => {
    if (text.trim() === "*") return "*";
    const phone = toE164(text);
    if (phone !== undefined) return phone;
    if (opts.uuids === true && SIGNAL_UUID.test(text.trim())) return text.trim().toLowerCase();
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(text)} is not ${expected}` });
    return z.NEVER;
  });
  return z.array(entry).default([]);
}

/** Who may talk to the agent through a channel's inbound side (default "pairing"). */
export const DmPolicySchema = z.enum(["pairing", "allowlist", "open", "disabled"]);
export type DmPolicy = z.output<typeof DmPolicySchema>;

/** Keys every kind accepts. */
const common = {
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

export const TelegramSettingsSchema = z.strictObject({
  ...common,
  botToken: nonEmpty("botToken"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://api.telegram.org"),
  inbound: z.enum(["webhook", "polling", "off"]).optional(),
  /** Checked against X-Telegram-Bot-Api-Secret-Token on inbound webhooks. */
  webhookSecret: nonEmpty("webhookSecret").optional(),
}).superRefine((settings, ctx) => {
  // A webhook without the secret would take updates from anyone who finds the URL.
  if (settings.inbound === "webhook" && settings.webhookSecret === undefined) {
    ctx.addIssue({ code: "custom", path: ["webhookSecret"], message: 'inbound "webhook" needs a webhookSecret (the secret_token given to setWebhook)' });
  }
});

export const SlackSettingsSchema = z.strictObject({
  ...common,
  botToken: nonEmpty("botToken"),
  signingSecret: nonEmpty("signingSecret").optional(),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://slack.com/api"),
});

export const DiscordSettingsSchema = z.strictObject({
  ...common,
  botToken: nonEmpty("botToken"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://discord.com/api/v10"),
  gatewayUrl: z
    .string()
    .refine((value) => /^wss?:\/\//.test(value), "gatewayUrl must be a ws(s) URL")
    .default("wss://gateway.discord.gg"),
  /** DMs and mentions arrive over the Gateway (one connection per bot across replicas), or not at all. */
  inbound: z.enum(["gateway", "off"]).default("gateway"),
});

export const SignalSettingsSchema = z.strictObject({
  ...common,
  allowFrom: phoneAllowFrom('an E.164 phone number such as +15550001111, a Signal account UUID, or "*"', { uuids: true }),
  /** signal-cli-rest-api. */
  bridgeUrl: httpUrl("bridgeUrl"),
  /** The registered account that sends, in E.164. */
  number: z.string().regex(E164, "number must be an E.164 phone number such as +15550001111"),
  /** Messages are read from the bridge's receive endpoint (one reader per number across replicas), or not at all. */
  inbound: z.enum(["receive", "off"]).default("receive"),
});

export const WhatsAppSettingsSchema = z.strictObject({
  ...common,
  allowFrom: phoneAllowFrom('an E.164 phone number such as +15550001111 (or its wa_id digits, 15550001111), or "*"'),
  accessToken: nonEmpty("accessToken"),
  phoneNumberId: z.string().regex(/^\d+$/, "phoneNumberId must be the numeric id Meta assigned"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://graph.facebook.com/v21.0"),
  /** Verifies X-Hub-Signature-256 on inbound webhooks. */
  appSecret: nonEmpty("appSecret").optional(),
  /** Answers the webhook verification handshake (hub.verify_token). */
  verifyToken: nonEmpty("verifyToken").optional(),
});

export const IMessageSettingsSchema = z.strictObject({
  ...common,
  /** The BlueBubbles server. */
  bridgeUrl: httpUrl("bridgeUrl"),
  password: nonEmpty("password"),
  /**
   * Send through BlueBubbles' Private API helper instead of AppleScript (replies use it
   * whatever this says). Needs the helper installed; AppleScript cannot send to the `any;-;`
   * chats of macOS 26.
   */
  privateApi: z.boolean().default(false),
});

export const CHANNEL_SETTINGS_SCHEMAS = {
  telegram: TelegramSettingsSchema,
  slack: SlackSettingsSchema,
  discord: DiscordSettingsSchema,
  signal: SignalSettingsSchema,
  whatsapp: WhatsAppSettingsSchema,
  imessage: IMessageSettingsSchema,
} as const;

export type ChannelKind = keyof typeof CHANNEL_SETTINGS_SCHEMAS;
export const CHANNEL_KINDS = Object.keys(CHANNEL_SETTINGS_SCHEMAS) as ChannelKind[];

export type TelegramSettings = z.output<typeof TelegramSettingsSchema>;
export type SlackSettings = z.output<typeof SlackSettingsSchema>;
export type DiscordSettings = z.output<typeof DiscordSettingsSchema>;
export type SignalSettings = z.output<typeof SignalSettingsSchema>;
export type WhatsAppSettings = z.output<typeof WhatsAppSettingsSchema>;
export type IMessageSettings = z.output<typeof IMessageSettingsSchema>;
export type ChannelSettings<K extends ChannelKind> = z.output<(typeof CHANNEL_SETTINGS_SCHEMAS)[K]>;

export function isChannelKind(kind: string): kind is ChannelKind {
  return Object.hasOwn(CHANNEL_SETTINGS_SCHEMAS, kind);
}
