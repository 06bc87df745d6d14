import { describe, expect, it } from "vitest";
import { configIssuesOf } from "./contract-helpers.js";
import { parseChannelAccounts } from "./channel-accounts.js";
import { SignalSettingsSchema, TelegramSettingsSchema, toE164, WhatsAppSettingsSchema } from "./channel-settings.js";

const WHATSAPP = { accessToken: "t", phoneNumberId: "1055" };
const SIGNAL = { bridgeUrl: "http://127.0.0.1:8080", number: "+15550001111" };

const issuesOf = configIssuesOf;

describe("toE164", () => {
  it("drops separators and gives bare digits (a wa_id) their '+'", () => {
    expect(toE164("+15550001111")).toBe("+15550001111");
    expect(toE164("15550001111")).toBe("+15550001111");
    expect(toE164(" +1 (555) 000-1111 ")).toBe("+15550001111");
    expect(toE164("+49.30.1234567")).toBe("+49301234567");
  });

  it("refuses what is not a phone number", () => {
    for (const text of ["", "*", "123", "+0123456789", "+1555000111122223", "U0123", "alice@example.com"]) {
      expect(toE164(text), text).toBeUndefined();
    }
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
