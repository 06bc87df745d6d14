/**
 * A platform held in memory, scripted like the HTTP fakes of @gw/testing, for the channel
 * contract's own tests (memory-adapter.ts talks to it).
 */
import type { FakeDelivery, FakeRequest, FakeStep } from "@gw/testing";
import type { ContractFake } from "../src/channel.contract.js";

export const LIMIT = 64;
const CHATS = new Set(["chat-1"]);
export const TOKENS = new Map([
  ["secret-token-a", "acct-a"],
  ["secret-token-b", "acct-b"],
]);

export interface Call {
  chat: string;
  text?: string;
  media?: string[];
  thread?: string;
  poll?: { question: string; options: string[]; multiple: boolean; anonymous: boolean };
  key?: string;
}

export class PlatformFailure extends Error {
  constructor(readonly step: Exclude<FakeStep, { kind: "delay" }>) {
    super(`platform failure ${step.kind}`);
  }
}

export class MemoryPlatform implements ContractFake {
  readonly requests: FakeRequest[] = [];
  readonly delivered: FakeDelivery[] = [];
  readonly tellsRetryAfter = true;
  readonly dedupesOnClientKey = true;
  /** What people wrote, in order, for receivers to read (seq is the position + 1). */
  readonly inbox: Array<{ id: string; chat: string; from: string; text: string }> = [];
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
    if (body === undefined || path === "/typing") return [account];
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

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
