import { type ChannelAdapter, ChannelError, type ChannelPolls, type OutboundMessage, type OutboundPoll, receiptOf } from "@gw/channels";
import { parseConfig } from "@gw/config";
import { createMemoryFastStore, type FastStore, RunOnce } from "@gw/store";
import { z } from "zod";
import { ChannelDirectory } from "../src/channel-directory.js";
import type { DeliveryPlugin } from "../src/channels/registry.js";
import { telegramPlugin } from "../src/channels/telegram/plugin.js";
import { Dispatcher } from "../src/outbound/dispatcher.js";
import { Pacer } from "../src/outbound/pacer.js";
import { StatusBook } from "../src/status-book.js";

/** A platform in memory: records calls, fails as scripted, validates digits-only recipients. */
export class ScriptedAdapter implements ChannelAdapter {
  readonly limits = { textChunk: 20, mediaPerMessage: 2 };
  polls?: ChannelPolls = { send: (poll, signal) => this.call(poll, signal) };
  readonly sent: Array<OutboundMessage | OutboundPoll> = [];
  /** One step per call, in order; no step left: the call succeeds. */
  readonly script: Array<ChannelError | "hang" | "ok"> = [];
  private next = 1;

  validateRecipient(to: string): string {
    if (!/^\d+$/.test(to.trim())) throw new ChannelError("recipient", `"${to}" is not a chat id`);
    return to.trim();
  }

  private async call(msg: OutboundMessage | OutboundPoll, signal: AbortSignal) {
    const step = this.script.shift();
    if (step === "hang") {
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    }
    if (step instanceof ChannelError) throw step;
    this.sent.push(msg);
    return receiptOf([`m${this.next++}`]);
  }

  send(msg: OutboundMessage, signal: AbortSignal) {
    return this.call(msg, signal);
  }

  async probe() {
    return { reachable: true };
  }
}

export function setup(opts: { store?: FastStore; polls?: boolean; sendTimeoutMs?: number; pacing?: "platform" | "off" } = {}) {
  const adapter = new ScriptedAdapter();
  if (opts.polls === false) delete adapter.polls;
  // Telegram's settings and rate rules, this adapter.
  const plugin: DeliveryPlugin = { ...telegramPlugin, create: () => adapter };
  const config = parseConfig(
    `{ channels: { default: "tg", tg: { kind: "telegram", botToken: "t0k" }, other: { kind: "telegram", botToken: "t1k" } } }`,
    { env: {} },
  );
  const directory = ChannelDirectory.build(config.channels, [plugin], () => {
    throw new Error("no HTTP in this test");
  });
  const store = opts.store ?? createMemoryFastStore();
  const dispatcher = new Dispatcher({
    directory,
    store,
    idempotency: new RunOnce<string[]>(store, { windowMs: 60_000, claimTtlMs: 10_000, pollMs: 5, schema: z.array(z.string()) }),
    pacer: new Pacer(store),
    status: new StatusBook(store),
    maxAttempts: 3,
    callTimeoutMs: 200,
    sendTimeoutMs: opts.sendTimeoutMs ?? 5_000,
    windowMs: 60_000,
    media: { allowHosts: [], allowPrivateNetworks: false },
    backoff: { baseMs: 10, capMs: 20 },
    pacing: opts.pacing ?? "platform",
  });
  return { adapter, dispatcher, store };
}

