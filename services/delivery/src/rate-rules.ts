/**
 * Each platform's published send limits, applied by the pacer before every platform call and
 * shared by every delivery replica (the counts live in the FastStore). A queued part waits for
 * its turn; it is never dropped for being fast.
 *
 * - Telegram: about 1 message/s per chat, 20/min per group, 30/s per bot
 *   (core.telegram.org/bots/faq, "broadcasting to users").
 * - Slack: about 1 message/s per channel (chat.postMessage, "Rate limits").
 * - Discord: 50 requests/s per bot (global); the per-route buckets come from the
 *   X-RateLimit-* headers of each answer (the plugin reports them as cooldowns).
 * - WhatsApp Cloud API: 80 messages/s per business phone number (the default throughput).
 * - signal-cli-rest-api and BlueBubbles publish no limits; they run on the user's own machine
 *   and phone, so they get a gentle 5/s per account and 1/s per chat (Signal's servers
 *   rate-limit bursts to one recipient with a 413).
 */
export interface RateRule {
  /** Named in logs and channels.status. */
  name: string;
  /** `chat`: per recipient of one account; `account`: per bot / number. */
  scope: "chat" | "account";
  max: number;
  windowMs: number;
  /** Applies only to some recipients (Telegram groups have negative chat ids). */
  appliesTo?: (to: string) => boolean;
}

const perChatPerSecond: RateRule = { name: "per-chat", scope: "chat", max: 1, windowMs: 1_000 };

export const RATE_RULES: Readonly<Record<string, readonly RateRule[]>> = {
  telegram: [
    perChatPerSecond,
    { name: "per-group", scope: "chat", max: 20, windowMs: 60_000, appliesTo: (to) => to.startsWith("-") },
    { name: "per-bot", scope: "account", max: 30, windowMs: 1_000 },
  ],
  slack: [{ ...perChatPerSecond, name: "per-channel" }],
  discord: [{ name: "global", scope: "account", max: 50, windowMs: 1_000 }],
  whatsapp: [{ name: "per-number", scope: "account", max: 80, windowMs: 1_000 }],
  signal: [perChatPerSecond, { name: "per-account", scope: "account", max: 5, windowMs: 1_000 }],
  imessage: [perChatPerSecond, { name: "per-account", scope: "account", max: 5, windowMs: 1_000 }],
};

export function rateRulesFor(kind: string, to: string): RateRule[] {
  return (RATE_RULES[kind] ?? []).filter((rule) => rule.appliesTo === undefined || rule.appliesTo(to));
}
