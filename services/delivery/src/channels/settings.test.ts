/**
 * The settings every shipped plugin declares (each in its own folder), as `channels.<id>` is
 * validated at start and by `gateway config check`.
 */
import { parseChannelAccounts } from "@gw/channels";
import { ConfigError } from "@gw/config";
import { describe, expect, it } from "vitest";
import { CHANNEL_PLUGINS } from "./index.js";
import { SignalSettingsSchema } from "./signal/settings.js";
import { TelegramSettingsSchema } from "./telegram/settings.js";
import { WhatsAppSettingsSchema } from "./whatsapp/settings.js";

const WHATSAPP = { accessToken: "t", phoneNumberId: "1055" };
const SIGNAL = { bridgeUrl: "http://127.0.0.1:8080", number: "+15550001111" };

function issuesOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error("expected a ConfigError");
}

describe("the plugins' settings", () => {
  it("ships one plugin per kind, each with a title and rate rules it can keep", () => {
    const kinds = CHANNEL_PLUGINS.map((plugin) => plugin.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds.sort()).toEqual(["discord", "imessage", "signal", "slack", "telegram", "whatsapp"]);
    for (const plugin of CHANNEL_PLUGINS) {
      expect(plugin.title.length, plugin.kind).toBeGreaterThan(0);
      for (const rule of plugin.rates) expect(rule.max > 0 && rule.windowMs > 0, `${plugin.kind} ${rule.name}`).toBe(true);
    }
    expect(CHANNEL_PLUGINS.filter((plugin) => plugin.sharedWebhookRoute).map((plugin) => plugin.kind)).toEqual(["slack"]);
  });

  it("accepts every key DESIGN §7 shows for each kind", () => {
    const examples: Record<string, Record<string, unknown>> = {
      telegram: {
        kind: "telegram", botToken: "t", apiBaseUrl: "https://api.telegram.org", inbound: "webhook",
        webhookSecret: "s", dmPolicy: "pairing", allowFrom: ["123456"], groups: { requireMention: true },
      },
      slack: { kind: "slack", botToken: "b", signingSecret: "s", apiBaseUrl: "https://slack.com/api", dmPolicy: "allowlist", allowFrom: ["U123"] },
      discord: { kind: "discord", botToken: "d", apiBaseUrl: "https://discord.com/api/v10", gatewayUrl: "wss://gateway.discord.gg" },
      signal: { kind: "signal", bridgeUrl: "http://127.0.0.1:8080", number: "+15550001111" },
      whatsapp: {
        kind: "whatsapp", accessToken: "w", phoneNumberId: "1055", apiBaseUrl: "https://graph.facebook.com/v21.0",
        appSecret: "a", verifyToken: "v",
      },
      imessage: { kind: "imessage", bridgeUrl: "http://127.0.0.1:1234", password: "p", agent: "main" },
    };
    for (const plugin of CHANNEL_PLUGINS) {
      expect(parseChannelAccounts(plugin.kind, examples[plugin.kind]!, plugin.settings), plugin.kind).toHaveLength(1);
    }
  });

  it("refuses a Telegram webhook without its secret", () => {
    expect(issuesOf(() => parseChannelAccounts("tg", { kind: "telegram", botToken: "b", inbound: "webhook" }, TelegramSettingsSchema))).toEqual([
      { path: "channels.tg.webhookSecret", message: 'inbound "webhook" needs a webhookSecret (the secret_token given to setWebhook)' },
    ]);
  });
});

describe("allowFrom of the phone-number platforms", () => {
  it("normalises WhatsApp entries to E.164, the form its inbound senders take, and keeps *", () => {
    const settings = WhatsAppSettingsSchema.parse({ ...WHATSAPP, allowFrom: ["15550001111", "+44 20 7946 0958", " * "] });
    expect(settings.allowFrom).toEqual(["+15550001111", "+442079460958", "*"]);
  });

  it("normalises Signal numbers and keeps account UUIDs (senders with a hidden number), lowercased", () => {
    const uuid = "A1B2C3D4-0000-4000-8000-00000000ABCD";
    const settings = SignalSettingsSchema.parse({ ...SIGNAL, allowFrom: ["+1 555 000 2222", "15550003333", uuid, "*"] });
    expect(settings.allowFrom).toEqual(["+15550002222", "+15550003333", uuid.toLowerCase(), "*"]);
  });

  it("refuses other entries at their key path, account by account", () => {
    expect(
      issuesOf(() => parseChannelAccounts("wa", { kind: "whatsapp", ...WHATSAPP, allowFrom: ["+15550001111", "alice", "123"] }, WhatsAppSettingsSchema)),
    ).toEqual([
      { path: "channels.wa.allowFrom[1]", message: expect.stringMatching(/^"alice" is not an E\.164 phone number such as \+15550001111/) },
      { path: "channels.wa.allowFrom[2]", message: expect.stringMatching(/^"123" is not an E\.164 phone number/) },
    ]);
    const channel = { kind: "signal", bridgeUrl: SIGNAL.bridgeUrl, accounts: { main: { number: SIGNAL.number, allowFrom: ["@alice"] } } };
    expect(issuesOf(() => parseChannelAccounts("sig", channel, SignalSettingsSchema))).toEqual([
      { path: "channels.sig.accounts.main.allowFrom[0]", message: '"@alice" is not an E.164 phone number such as +15550001111, a Signal account UUID, or "*"' },
    ]);
  });

  it("leaves other platforms' sender ids alone: they are not phone numbers", () => {
    expect(TelegramSettingsSchema.parse({ botToken: "b", allowFrom: ["123456789", "*"] }).allowFrom).toEqual(["123456789", "*"]);
  });
});
