import { type InboundMessage } from "@gw/channels";
import { SignalSettingsSchema } from "./channels/signal/settings.js";
import { WhatsAppSettingsSchema } from "./channels/whatsapp/settings.js";
import { describe, expect, it } from "vitest";
import { allowListed, inboundPolicyOf, judgeSender, needsApprovalLookup } from "./sender-policy.js";

const direct: InboundMessage = {
  eventId: "1",
  chat: "42",
  sender: "42",
  chatType: "direct",
  mentioned: false,
  fromBot: false,
  text: "hello",
  sentAt: 0,
};
const group: InboundMessage = { ...direct, chat: "-100", chatType: "group" };

const policy = (over: Partial<Parameters<typeof inboundPolicyOf>[0]> = {}) =>
  inboundPolicyOf({ dmPolicy: "pairing", allowFrom: [], ...over });

describe("the sender policy", () => {
  it("defaults to pairing, with mentions required in groups", () => {
    expect(policy()).toEqual({ dmPolicy: "pairing", allowFrom: [], requireMention: true });
    expect(judgeSender(direct, policy(), false)).toEqual({ kind: "pair" });
  });

  it("answers known senders under pairing and allowlist, and refuses unknown ones under allowlist", () => {
    expect(judgeSender(direct, policy(), true)).toEqual({ kind: "answer" });
    expect(judgeSender(direct, policy({ dmPolicy: "allowlist" }), true)).toEqual({ kind: "answer" });
    expect(judgeSender(direct, policy({ dmPolicy: "allowlist" }), false)).toMatchObject({ kind: "ignore", reason: /allowlist/ });
  });

  it("answers everyone under open and no one under disabled", () => {
    expect(judgeSender(direct, policy({ dmPolicy: "open" }), false)).toEqual({ kind: "answer" });
    expect(judgeSender(direct, policy({ dmPolicy: "disabled" }), true)).toMatchObject({ kind: "ignore", reason: /disabled/ });
    expect(judgeSender({ ...group, mentioned: true }, policy({ dmPolicy: "disabled" }), true)).toMatchObject({ kind: "ignore" });
  });

  it("never answers bots, its own messages included, or empty messages", () => {
    expect(judgeSender({ ...direct, fromBot: true }, policy({ dmPolicy: "open" }), true)).toMatchObject({ kind: "ignore", reason: /bot/ });
    expect(judgeSender({ ...direct, text: "  " }, policy({ dmPolicy: "open" }), true)).toMatchObject({ kind: "ignore", reason: /empty/ });
    expect(judgeSender({ ...direct, text: "", attachments: [{ kind: "image", url: "https://x.example/a.png" }] }, policy({ dmPolicy: "open" }), true)).toEqual({ kind: "answer" });
  });

  it("answers in groups only when mentioned, unless groups.requireMention is false", () => {
    const open = policy({ dmPolicy: "open" });
    expect(judgeSender(group, open, false)).toMatchObject({ kind: "ignore", reason: /mention/ });
    expect(judgeSender({ ...group, mentioned: true }, open, false)).toEqual({ kind: "answer" });
    expect(judgeSender(group, policy({ dmPolicy: "open", groups: { requireMention: false } }), false)).toEqual({ kind: "answer" });
  });

  it("never posts pairing codes into groups: an unknown sender there is ignored", () => {
    expect(judgeSender({ ...group, mentioned: true }, policy(), false)).toMatchObject({ kind: "ignore", reason: /groups/ });
    expect(judgeSender({ ...group, mentioned: true }, policy(), true)).toEqual({ kind: "answer" });
  });

  it("matches allowFrom without case or spaces, with * for everyone, and skips the approval lookup then", () => {
    const p = policy({ dmPolicy: "allowlist", allowFrom: [" U0ABC ", "Alice@Example.com"] });
    expect(allowListed(p, "u0abc")).toBe(true);
    expect(allowListed(p, "alice@example.com")).toBe(true);
    expect(allowListed(p, "U0OTHER")).toBe(false);
    expect(allowListed(policy({ allowFrom: ["*"] }), "anyone")).toBe(true);
    expect(needsApprovalLookup({ ...direct, sender: "U0ABC" }, p)).toBe(false);
    expect(needsApprovalLookup({ ...direct, sender: "U0OTHER" }, p)).toBe(true);
    expect(needsApprovalLookup({ ...direct, fromBot: true }, p)).toBe(false);
    expect(needsApprovalLookup(direct, policy({ dmPolicy: "open" }))).toBe(false);
  });

  it("matches a WhatsApp or Signal sender (+digits) against allowFrom written as a wa_id or with separators", () => {
    const whatsapp = inboundPolicyOf(
      WhatsAppSettingsSchema.parse({ accessToken: "t", phoneNumberId: "1055", dmPolicy: "allowlist", allowFrom: ["15550001111"] }),
    );
    expect(allowListed(whatsapp, "+15550001111")).toBe(true);
    expect(allowListed(whatsapp, "+15550009999")).toBe(false);
    const signal = inboundPolicyOf(
      SignalSettingsSchema.parse({ bridgeUrl: "http://127.0.0.1:8080", number: "+15550000000", allowFrom: ["+1 (555) 000-2222"] }),
    );
    expect(allowListed(signal, "+15550002222")).toBe(true);
  });
});
