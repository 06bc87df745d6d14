/**
 * Tests of the contract suite itself, against an in-memory platform and adapter (test/): the
 * correct adapter passes every check, and each deliberately flawed one fails the check meant to
 * catch it.
 */
import { describe, expect, it } from "vitest";
import { type ChannelHarness, CHANNEL_CONTRACT_CHECKS, describeChannelContract } from "./channel.contract.js";
import type { RawInbound } from "./inbound.js";
import { type Flaws, memoryAdapter } from "../test/memory-adapter.js";
import { MemoryPlatform, TOKENS } from "../test/memory-platform.js";

let written = 0;

/** A person's message to the first account's webhook, with `token` as its credential. */
function webhookRequest(token: string, body: string): RawInbound {
  return { method: "POST", path: "/webhook", query: {}, headers: { "x-token": token, "content-type": "application/json" }, body: Buffer.from(body) };
}

function memoryHarness(flaws: Flaws = {}): ChannelHarness {
  const fake = new MemoryPlatform();
  const [a, b] = [...TOKENS.keys()];
  const inboundAdapter = memoryAdapter(fake, a!, flaws);
  const message = (text: string) => JSON.stringify({ id: `event-${++written}`, chat: "chat-1", from: "person-1", text });
  return {
    fake,
    accounts: [
      { adapter: memoryAdapter(fake, a!, flaws), identity: "acct-a" },
      { adapter: memoryAdapter(fake, b!, flaws), identity: "acct-b" },
    ],
    recipient: { to: " chat-1 ", chat: "chat-1" },
    threadId: "thread-9",
    invalidRecipients: ["", "chat 1", "@someone"],
    media: { urls: ["https://media.example/a.png", "https://media.example/b.pdf"], bytes: [new Uint8Array([1]), new Uint8Array([2])] },
    expectedTextRequest: (text) => ({ method: "POST", path: "/send", body: { chat: "chat-1", text } }),
    inbound: {
      webhook: {
        adapter: inboundAdapter,
        request: (text) => webhookRequest(a!, message(text)),
        forged: (text) => webhookRequest("not-the-token", message(text)),
        malformed: () => webhookRequest(a!, "{not json"),
      },
      receiver: {
        adapter: inboundAdapter,
        write: (text) => void fake.inbox.push({ id: `event-${++written}`, chat: "chat-1", from: "person-1", text }),
      },
      from: { chat: "chat-1", sender: "person-1" },
    },
    secrets: [a!, b!],
    close: async () => {},
  };
}

describeChannelContract("in-memory reference adapter", async () => memoryHarness());

describe("the channel contract catches", () => {
  const cases: Array<[string, Flaws, string]> = [
    ["a credential in an error message", { leakSecret: true }, "keeps credentials out of error messages"],
    ["a dropped threadId", { ignoreThread: true }, "puts a threadId on the platform's thread"],
    ["recipients sent unchecked", { laxRecipients: true }, "refuses malformed recipients"],
    ["a 429 reported as an outage", { rateLimitAsUnavailable: true }, "maps a 429"],
    ["receipt ids the platform never issued", { localIds: true }, "sends text:"],
    ["a chunk size the platform refuses", { overstateChunk: true }, "exactly limits.textChunk"],
    ["an inbound capability with nothing in it", { emptyInbound: true }, "groups its capabilities"],
    ["a constant idempotency key", { constantKey: true }, "repeated idempotency key"],
    ["a probe that ignores its signal", { probeIgnoresAbort: true }, "answers status under abort"],
    ["a typing call that ignores its signal", { typingIgnoresAbort: true }, "shows typing"],
    ["a webhook that takes a forged request", { acceptsForged: true }, "refuses a forged webhook request"],
    ["a webhook that throws on a malformed body", { throwsOnMalformed: true }, "refuses a forged webhook request"],
    ["a webhook whose eventId changes when the platform retries", { newEventIds: true }, "same eventId"],
    ["a receiver that reads before its cursor again", { receiverRepeats: true }, "resumes after the cursor"],
    ["a receiver that does not stop", { receiverIgnoresAbort: true }, "stops its receiver"],
    ["a refusal without the platform's reason", { noReason: true }, "maps a permanent platform refusal"],
    ["a send that throws instead of rejecting", { syncThrow: true }, "refuses malformed recipients"],
    ["an abort that is not honoured", { ignoreAbort: true }, "AbortError"],
  ];
  for (const [what, flaws, checkName] of cases) {
    it(what, async () => {
      const check = CHANNEL_CONTRACT_CHECKS.find((c) => c.name.includes(checkName));
      expect(check, checkName).toBeDefined();
      const harness = memoryHarness(flaws);
      await expect(check!.run(harness)).rejects.toThrow();
    });
  }

  it("nothing wrong in a platform without polls, which refuses them without a call", async () => {
    const check = CHANNEL_CONTRACT_CHECKS.find((c) => c.name.includes("refuses polls as unsupported"))!;
    const harness = memoryHarness({ noPolls: true });
    expect(check.applies!(harness)).toBe(true);
    await check.run(harness);
    expect(check.applies!(memoryHarness())).toBe(false);
  });

  it("two accounts that share one credential", async () => {
    const harness = memoryHarness();
    const fake = harness.fake as MemoryPlatform;
    const shared = memoryAdapter(fake, "secret-token-a", {});
    const check = CHANNEL_CONTRACT_CHECKS.find((c) => c.name.includes("each account"))!;
    await expect(check.run({ ...harness, accounts: [harness.accounts[0], { adapter: shared, identity: "acct-b" }] })).rejects.toThrow();
  });
});
