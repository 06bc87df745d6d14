import { describe, expect, it } from "vitest";
import { configIssuesOf } from "./contract-helpers.js";
import { parseChannelAccounts } from "./channel-accounts.js";
import { z } from "zod";
import { COMMON_SETTINGS, phoneAllowFrom, toE164 } from "./channel-settings.js";

/** Settings of a platform whose senders are phone numbers, or account UUIDs where it hides the number. */
const PhoneSenders = z.strictObject({ ...COMMON_SETTINGS, allowFrom: phoneAllowFrom('a phone number or "*"') });
const UuidSenders = z.strictObject({ ...COMMON_SETTINGS, allowFrom: phoneAllowFrom('a phone number, an account UUID or "*"', { uuids: true }) });

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

describe("phoneAllowFrom", () => {
  it("normalises entries to E.164, the form inbound senders take, and keeps *", () => {
    expect(PhoneSenders.parse({ allowFrom: ["15550001111", "+44 20 7946 0958", " * "] }).allowFrom).toEqual(["+15550001111", "+442079460958", "*"]);
  });

  it("keeps account UUIDs (senders with a hidden number), lowercased, where the platform has them", () => {
    const uuid = "A1B2C3D4-0000-4000-8000-00000000ABCD";
    expect(UuidSenders.parse({ allowFrom: ["+1 555 000 2222", uuid, "*"] }).allowFrom).toEqual(["+15550002222", uuid.toLowerCase(), "*"]);
    expect(issuesOf(() => parseChannelAccounts("p", { kind: "x", allowFrom: [uuid] }, PhoneSenders))).toEqual([
      { path: "channels.p.allowFrom[0]", message: `"${uuid}" is not a phone number or "*"` },
    ]);
  });

  it("refuses other entries at their key path, account by account", () => {
    const channel = { kind: "x", accounts: { main: { allowFrom: ["+15550001111", "@alice"] } } };
    expect(issuesOf(() => parseChannelAccounts("sig", channel, UuidSenders))).toEqual([
      { path: "channels.sig.accounts.main.allowFrom[1]", message: '"@alice" is not a phone number, an account UUID or "*"' },
    ]);
  });
});
