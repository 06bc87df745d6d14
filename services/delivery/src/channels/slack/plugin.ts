/**
 * Slack: one bot token. Everything goes out with chat.postMessage: text as `text`, media as
 * blocks (message.ts), the thread as `thread_ts`. A user id as `channel` posts to the bot's DM
 * with that user, which Slack opens by itself; where Slack answers `channel_not_found` to that
 * instead (older app types), the DM is opened with conversations.open (scope im:write) and the
 * post made there. Slack's Web API has no polls, and no client dedupe id; status is auth.test.
 * Inbound: the Events API, verified with `signingSecret` (inbound.ts); bots have no typing indicator.
 */
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelProbe,
  type ChannelInbound,
  definePlugin,
  type DeliveryReceipt,
  type InboundFiles,
  type OutboundMessage,
  PER_CHAT_PER_SECOND,
  receiptOf,
} from "@gw/channels";
import type { PluginContext } from "../registry.js";
import { AuthTestSchema, OpenConversationSchema, PostMessageSchema, SlackApi } from "./api.js";
import { SlackEvents } from "./inbound.js";
import { SlackFiles } from "./inbound-files.js";
import { escapeText, mediaBlock, mediaFallback, SECTION_TEXT_MAX, section, type SlackBlock } from "./message.js";
import { type SlackSettings, SlackSettingsSchema } from "./settings.js";

/** Slack asks for at most 4,000 characters a message (it truncates at 40,000). */
export const SLACK_TEXT_CHUNK = 4000;
/** A message takes 50 blocks; ten media keep one message readable, as an album elsewhere. */
export const SLACK_MEDIA_PER_MESSAGE = 10;

/** Ids: users U/W, conversations C (public), G (private, older), D (DM). Names: `#` and Slack's name rules. */
const CONVERSATION_ID = /^[UWCGD][A-Z0-9]{6,20}$/;
const USER_ID = /^[UW]/;
const CHANNEL_NAME = /^#[\p{Ll}\p{Lo}\p{Nd}_-]{1,80}$/u;
/** A message's `ts`: seconds, a dot, microseconds. */
const TS = /^\d{9,}\.\d{1,6}$/;

export class SlackAdapter implements ChannelAdapter {
  readonly limits = { textChunk: SLACK_TEXT_CHUNK, mediaPerMessage: SLACK_MEDIA_PER_MESSAGE };

  /** Events API requests, verified with the app's signing secret (none configured: no inbound). */
  readonly inbound?: ChannelInbound;
  /** User id -> DM id, for users whose DM had to be opened first. */
  private readonly dms = new Map<string, string>();

  constructor(
    private readonly api: SlackApi,
    signingSecret?: string,
    /** The files people share (inbound-files.ts). */
    files?: InboundFiles,
  ) {
    if (signingSecret !== undefined) this.inbound = { webhook: new SlackEvents(signingSecret), ...(files === undefined ? {} : { files }) };
  }

  validateRecipient(to: string): string {
    const channel = to.trim();
    if (CONVERSATION_ID.test(channel) || CHANNEL_NAME.test(channel)) return channel;
    throw new ChannelError(
      "recipient",
      `a Slack recipient is a user id (U…/W…), a conversation id (C…/G…/D…) or #channel-name, got ${JSON.stringify(to.slice(0, 64))}`,
    );
  }

  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const to = this.validateRecipient(msg.to);
    const base = thread(msg.threadId);
    const text = msg.text !== undefined && msg.text !== "" ? escapeText(msg.text) : undefined;
    const posts: Array<Record<string, unknown>> = [];
    if (msg.mediaUrls.length === 0) {
      if (text === undefined) throw new ChannelError("rejected", "nothing to send: no text and no media");
      posts.push({ ...base, text });
    } else {
      const blocks: SlackBlock[] = msg.mediaUrls.map(mediaBlock);
      // The text heads the media as a section when one takes it, else goes first on its own.
      const headed = text !== undefined && text.length <= SECTION_TEXT_MAX;
      if (headed) blocks.unshift(section(text));
      else if (text !== undefined) posts.push({ ...base, text });
      posts.push({ ...base, text: headed ? text : mediaFallback(msg.mediaUrls), blocks });
    }
    return receiptOf(await this.postAll(to, posts, signal));
  }

  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const me = await this.api.call("auth.test", {}, AuthTestSchema, signal);
    return { reachable: true, identity: `@${me.user} (${me.team})` };
  }

  /** The posts in order; a user's DM is opened first when Slack will not open it by itself. */
  private async postAll(to: string, posts: ReadonlyArray<Record<string, unknown>>, signal: AbortSignal): Promise<string[]> {
    let channel = this.dms.get(to) ?? to;
    const ids: string[] = [];
    for (const post of posts) {
      try {
        ids.push(await this.post({ channel, ...post }, signal));
      } catch (err) {
        const retryAsDm = ids.length === 0 && channel === to && USER_ID.test(to) && err instanceof ChannelError && err.platformCode === "channel_not_found";
        if (!retryAsDm) throw err;
        channel = await this.openDm(to, signal);
        ids.push(await this.post({ channel, ...post }, signal));
      }
    }
    return ids;
  }

  private async openDm(user: string, signal: AbortSignal): Promise<string> {
    const opened = await this.api.call("conversations.open", { users: user }, OpenConversationSchema, signal);
    this.dms.set(user, opened.channel.id);
    return opened.channel.id;
  }

  private async post(params: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    return (await this.api.call("chat.postMessage", params, PostMessageSchema, signal)).ts;
  }
}

/** `thread_ts` for a thread; a threadId that is not a message ts cannot name one. */
function thread(threadId: string | undefined): { thread_ts?: string } {
  if (threadId === undefined || threadId === "") return {};
  if (!TS.test(threadId)) {
    throw new ChannelError("rejected", `a Slack threadId is the ts of the thread's first message (such as 1700000000.000100), got ${JSON.stringify(threadId.slice(0, 64))}`);
  }
  return { thread_ts: threadId };
}

/**
 * Slack asks for about one message a second per channel (chat.postMessage, "Rate limits"). The
 * Events API posts every app's events to one URL (`/api/chatapp/events`): each Slack account
 * that takes webhooks is offered the request until one's signing secret verifies it, and
 * `url_verification` is answered by SlackEvents.
 */
export const slackPlugin = definePlugin({
  kind: "slack",
  title: "Slack",
  settings: SlackSettingsSchema,
  rates: [{ ...PER_CHAT_PER_SECOND, name: "per-channel" }],
  sharedWebhookRoute: true,
  create: ({ settings, http }: PluginContext<SlackSettings>) => {
    const api = SlackApi.create(settings, http);
    return new SlackAdapter(api, settings.signingSecret, new SlackFiles(api, settings));
  },
});
