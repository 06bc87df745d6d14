/**
 * Tests of the contract suite itself, against an in-memory platform and adapter: the correct
 * adapter passes every check, and each deliberately flawed one fails the check meant to catch it.
 */
import type { FakeDelivery, FakeRequest, FakeStep } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { type ChannelAdapter, type DeliveryReceipt, receiptOf } from "./channel-adapter.js";
import { CHANNEL_CONTRACT_CHECKS } from "./channel-checks.contract.js";
import { ChannelError } from "./channel-error.js";
import { type ChannelHarness, type ContractFake, describeChannelContract } from "./channel.contract.js";

const LIMIT = 64;
const CHATS = new Set(["chat-1"]);
const TOKENS = new Map([
  ["secret-token-a", "acct-a"],
  ["secret-token-b", "acct-b"],
]);

interface Call {
  chat: string;
  text?: string;
  media?: string[];
  thread?: string;
  poll?: { question: string; options: string[]; multiple: boolean; anonymous: boolean };
  key?: string;
}

class PlatformFailure extends Error {
  constructor(readonly step: Exclude<FakeStep, { kind: "delay" }>) {
    super(`platform failure ${step.kind}`);
  }
}

/** A platform held in memory, scripted like the HTTP fakes. */
class MemoryPlatform implements ContractFake {
  readonly requests: FakeRequest[] = [];
  readonly delivered: FakeDelivery[] = [];
  readonly tellsRetryAfter = true;
  readonly dedupesOnClientKey = true;
  private readonly script: FakeStep[] = [];
  private readonly byKey = new Map<string, string[]>();
  private nextId = 0;

  next(step: FakeStep, times = 1): void {
    for (let i = 0; i < times; i++) this.script.push(step);
  }

  reset(): void {
    this.requests.length = 0;
    this.delivered.length = 0;
    this.script.length = 0;
  }

  async call(token: string, path: string, body: Call | undefined, signal: AbortSignal): Promise<string[]> {
    this.requests.push({ method: body ? "POST" : "GET", path, query: {}, headers: { authorization: `Bearer ${token}` }, body, receivedAt: Date.now() });
    let step = this.script.shift();
    if (step?.kind === "delay") {
      await abortableSleep(step.ms, signal);
      step = undefined;
    }
    if (step !== undefined) throw new PlatformFailure(step);
    const account = TOKENS.get(token);
    if (account === undefined) throw new PlatformFailure({ kind: "reject", status: 401, reason: "unknown token" });
    if (body === undefined) return [account];
    if (!CHATS.has(body.chat)) throw new PlatformFailure({ kind: "reject", status: 404, reason: "chat not found" });
    if ((body.text?.length ?? 0) > LIMIT) throw new PlatformFailure({ kind: "reject", status: 400, reason: "text too long" });
    const earlier = body.key === undefined ? undefined : this.byKey.get(`${account}:${body.key}`);
    if (earlier !== undefined) return earlier;
    const ids = this.store(account, body);
    if (body.key !== undefined) this.byKey.set(`${account}:${body.key}`, ids);
    return ids;
  }

  private store(account: string, body: Call): string[] {
    const base = { account, chat: body.chat, ...(body.thread === undefined ? {} : { threadId: body.thread }), ...(body.key ? { clientKey: body.key } : {}) };
    const add = (extra: Partial<FakeDelivery>) => {
      const id = `m${++this.nextId}`;
      this.delivered.push({ id, media: [], ...base, ...extra });
      return id;
    };
    if (body.poll) {
      const { question, options, multiple, anonymous } = body.poll;
      return [add({ poll: { question, options, allowMultipleAnswers: multiple, anonymous } })];
    }
    const media = body.media ?? [];
    if (media.length === 0) return [add({ text: body.text })];
    return media.map((url, i) => add({ media: [{ url }], ...(i === 0 && body.text ? { text: body.text } : {}) }));
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

/** Ways an adapter can be wrong, each of which some check must catch. */
interface Flaws {
  leakSecret?: boolean;
  ignoreThread?: boolean;
  laxRecipients?: boolean;
  rateLimitAsUnavailable?: boolean;
  localIds?: boolean;
  overstateChunk?: boolean;
  pollsWithoutSendPoll?: boolean;
  ignoreAbort?: boolean;
  constantKey?: boolean;
  throwingProbe?: boolean;
  noReason?: boolean;
  syncThrow?: boolean;
  noPolls?: boolean;
}

/** What the registry's http client does with every configured secret. */
function scrub(text: string): string {
  let out = text;
  for (const secret of TOKENS.keys()) out = out.replaceAll(secret, "[redacted]");
  return out;
}

function memoryAdapter(platform: MemoryPlatform, token: string, flaws: Flaws): ChannelAdapter {
  const validateRecipient = (to: string): string => {
    const chat = to.trim();
    if (!flaws.laxRecipients && !/^chat-\w+$/.test(chat)) throw new ChannelError("recipient", `not a chat id: ${JSON.stringify(to)}`);
    return chat;
  };
  const failure = (err: unknown): unknown => {
    if (!(err instanceof PlatformFailure)) return err;
    const { step } = err;
    const secretNote = flaws.leakSecret ? ` (token ${token})` : "";
    if (step.kind === "reject") {
      const reason = flaws.noReason ? "refused" : scrub(step.reason ?? "refused");
      return new ChannelError("rejected", `memory platform refused: ${reason}${secretNote}`, { status: step.status ?? 400 });
    }
    if (step.kind === "rate_limit" && !flaws.rateLimitAsUnavailable) {
      return new ChannelError("rate_limited", "memory platform: slow down", { status: 429, retryAfterMs: step.retryAfterSeconds * 1000 });
    }
    return new ChannelError("unavailable", `memory platform unavailable${secretNote}`);
  };
  const call = async (path: string, body: Call | undefined, signal: AbortSignal): Promise<DeliveryReceipt> => {
    try {
      const ids = await platform.call(token, path, body, flaws.ignoreAbort ? new AbortController().signal : signal);
      return receiptOf(flaws.localIds ? ids.map((id) => `local-${id}`) : ids);
    } catch (err) {
      throw failure(err);
    }
  };
  const sendNow: ChannelAdapter["send"] = (msg, signal) =>
    call(
      "/send",
      {
        chat: validateRecipient(msg.to),
        text: msg.text,
        media: msg.mediaUrls,
        thread: flaws.ignoreThread ? undefined : msg.threadId,
        key: flaws.constantKey ? "same" : msg.idempotencyKey,
      },
      signal,
    );
  const adapter: ChannelAdapter = {
    limits: { textChunk: flaws.overstateChunk ? LIMIT * 2 : LIMIT, polls: !flaws.noPolls },
    validateRecipient,
    // Validation inside the async function: a bad recipient rejects rather than throws.
    send: flaws.syncThrow ? sendNow : async (msg, signal) => sendNow(msg, signal),
    status: async (signal) => {
      try {
        await call("/me", undefined, signal);
        return { reachable: true, identity: TOKENS.get(token) };
      } catch (err) {
        if (flaws.throwingProbe) throw err;
        return { reachable: false, error: (err as Error).message };
      }
    },
  };
  if (!flaws.pollsWithoutSendPoll && !flaws.noPolls) {
    adapter.sendPoll = async (p, signal) =>
      call("/poll", { chat: validateRecipient(p.to), poll: { question: p.question, options: p.options, multiple: p.allowMultipleAnswers, anonymous: p.anonymous }, key: p.idempotencyKey }, signal);
  }
  return adapter;
}

function memoryHarness(flaws: Flaws = {}): ChannelHarness {
  const fake = new MemoryPlatform();
  const [a, b] = [...TOKENS.keys()];
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
    ["polls declared without sendPoll", { pollsWithoutSendPoll: true }, "declares limits"],
    ["a constant idempotency key", { constantKey: true }, "repeated idempotency key"],
    ["a probe that throws", { throwingProbe: true }, "probes status"],
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
