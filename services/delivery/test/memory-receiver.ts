import type { ChannelAdapter, ChannelReceiver, InboundMessage, ReceivedBatch } from "@gw/channels";
import { parseConfig } from "@gw/config";
import { ChannelDirectory } from "../src/channel-directory.js";
import type { DeliveryPlugin } from "../src/channels/registry.js";
import { telegramPlugin } from "../src/channels/telegram/plugin.js";
import type { InboundOrigin, InboundSink } from "../src/inbound/store/sink.js";

/**
 * A platform's message log in memory, read the way pollers read one: from a cursor (the index
 * of the next message), in batches, waiting while there is nothing new. Counts its readers, so
 * a test can see how many replicas read at once.
 */
export class MessageLog {
  readonly messages: InboundMessage[] = [];
  /** The cursor every receive() started from, in order. */
  readonly startedFrom: Array<string | undefined> = [];
  active = 0;
  maxActive = 0;
  /** Thrown by the next receive() calls, one each (a platform that is down). */
  readonly failures: Error[] = [];
  private wake: Array<() => void> = [];

  write(text: string, over: Partial<InboundMessage> = {}): InboundMessage {
    const message: InboundMessage = {
      eventId: `e${this.messages.length + 1}`,
      chat: "42",
      sender: "7",
      chatType: "direct",
      mentioned: false,
      fromBot: false,
      text,
      sentAt: Date.now(),
      ...over,
    };
    this.messages.push(message);
    for (const wake of this.wake.splice(0)) wake();
    return message;
  }

  receiver(batchSize = 3): ChannelReceiver {
    return { receive: (cursor, signal) => this.read(cursor, signal, batchSize) };
  }

  private async *read(cursor: string | undefined, signal: AbortSignal, batchSize: number): AsyncGenerator<ReceivedBatch> {
    this.startedFrom.push(cursor);
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      let next = cursor === undefined ? 0 : Number(cursor);
      while (!signal.aborted) {
        if (next < this.messages.length) {
          const messages = this.messages.slice(next, next + batchSize);
          next += messages.length;
          yield { messages, cursor: String(next) };
          continue;
        }
        await new Promise<void>((resolve) => {
          this.wake.push(resolve);
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    } finally {
      this.active -= 1;
    }
  }
}

/** The sink in memory: what was accepted, per account, in order; can be told to fail. */
export class MemorySink implements InboundSink {
  readonly accepted: Array<{ origin: InboundOrigin; message: InboundMessage }> = [];
  /** Each accept() call takes one step: an error to throw, or undefined to succeed. */
  readonly script: Array<Error | undefined> = [];

  async accept(origin: InboundOrigin, messages: readonly InboundMessage[]): Promise<void> {
    const step = this.script.shift();
    if (step !== undefined) throw step;
    for (const message of messages) this.accepted.push({ origin, message });
  }

  eventIds(channelId?: string): string[] {
    return this.accepted.filter((a) => channelId === undefined || a.origin.channelId === channelId).map((a) => a.message.eventId);
  }
}

/** A directory of `channelIds` (kind telegram), each account reading the log given for it. */
export function receiverDirectory(logs: Record<string, MessageLog | undefined>): ChannelDirectory {
  const ids = Object.keys(logs);
  const channels = Object.fromEntries(ids.map((id, i) => [id, { kind: "telegram", botToken: `t0k${i}` }]));
  const config = parseConfig(JSON.stringify({ channels }), { env: {} });
  const plugin: DeliveryPlugin = {
    ...telegramPlugin,
    create: ({ channelId }): ChannelAdapter => ({
      limits: { textChunk: 100 },
      validateRecipient: (to) => to,
      send: () => Promise.reject(new Error("no sends in this test")),
      probe: () => Promise.resolve({ reachable: true }),
      ...(logs[channelId] === undefined ? {} : { inbound: { receiver: logs[channelId].receiver() } }),
    }),
  };
  return ChannelDirectory.build(config.channels, [plugin], () => {
    throw new Error("no HTTP in this test");
  });
}
