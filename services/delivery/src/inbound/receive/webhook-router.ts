import type { InboundReply as PluginReply, InboundResult, RawInbound } from "@gw/channels";
import type { InboundReply, InboundRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { ChannelAccount, ChannelDirectory } from "../../channel-directory.js";
import type { StatusBook } from "../../status-book.js";
import type { InboundSink } from "../store/sink.js";

function jsonReply(status: number, body: Record<string, unknown>): PluginReply {
  return { status, headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify(body) };
}

function toWire(reply: PluginReply): InboundReply {
  return { status: reply.status, headers: reply.headers ?? {}, body: Buffer.from(reply.body ?? "", "utf8") };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * `inbound.handle` (DESIGN §9): a platform's webhook request, forwarded raw by the edge, goes
 * to the account its route names (`/api/channels/<id>/webhook`: the channel's default account,
 * `/api/channels/<id>/<accountId>/webhook`: that one); a request on the app-wide route, which
 * names no channel (Slack's `/api/chatapp/events`), goes to the first account of a plugin with
 * `sharedWebhookRoute` whose secret verifies it. The account's plugin verifies and parses the
 * request; what it carries is stored durably (the sink) before the plugin's reply goes back, so
 * a 2xx means stored. A store that cannot take it answers 503 and the platform sends the event
 * again. Every failure is the account's own: it is recorded in its channels.status and nothing
 * else is touched.
 */
export class WebhookRouter {
  constructor(
    private readonly deps: {
      directory: ChannelDirectory;
      sink: InboundSink;
      status: StatusBook;
      logger: Logger;
    },
  ) {}

  async handle(req: InboundRequest): Promise<InboundReply> {
    const raw: RawInbound = { method: req.method, path: req.path, query: req.query, headers: req.headers, body: req.body };
    const candidates = this.candidates(req);
    if (!Array.isArray(candidates)) return toWire(candidates);
    let last: { account: ChannelAccount; result: InboundResult } | undefined;
    const refusedBy: ChannelAccount[] = [];
    for (const account of candidates) {
      const result = await this.verify(account, raw);
      last = { account, result };
      // The shared route: a signature this account cannot verify may be another account's.
      if (result.reply.status !== 401) break;
      refusedBy.push(account);
    }
    if (last === undefined) return toWire(jsonReply(404, { ok: false, error: "no account takes these webhooks" }));
    const { account, result } = last;
    if (result.reply.status >= 400) {
      // A request no candidate could verify is every candidate's concern (a wrong secret somewhere).
      const blamed = result.reply.status === 401 ? refusedBy : [account];
      const why = `webhook refused (${result.reply.status}): ${(result.reply.body ?? "").slice(0, 200)}`;
      for (const each of blamed) this.deps.status.inboundFailure(each.channelId, each.accountId, why);
      return toWire(result.reply);
    }
    this.deps.status.inbound(account.channelId, account.accountId);
    if (result.messages.length > 0) {
      try {
        await this.deps.sink.accept({ channelId: account.channelId, accountId: account.accountId }, result.messages);
      } catch (err) {
        this.deps.logger.error({ err, channel: account.channelId, account: account.accountId }, "cannot store inbound messages");
        this.deps.status.inboundFailure(account.channelId, account.accountId, `cannot store inbound messages: ${errorText(err)}`);
        return toWire(jsonReply(503, { ok: false, error: "the message could not be stored; send it again" }));
      }
    }
    return toWire(result.reply);
  }

  /** The accounts that may own the request, or the reply when none can. */
  private candidates(req: InboundRequest): ChannelAccount[] | PluginReply {
    if (req.channelId === "") {
      const shared = this.deps.directory.plugins.filter((plugin) => plugin.sharedWebhookRoute === true);
      const accounts = this.deps.directory
        .list()
        .filter((entry) => shared.includes(entry.plugin))
        .flatMap((entry) => entry.accounts)
        .filter((account) => account.adapter.inbound?.webhook !== undefined);
      const names = shared.map((plugin) => `${plugin.title} `).join("or ");
      return accounts.length > 0 ? accounts : jsonReply(404, { ok: false, error: `no ${names}channel takes events here` });
    }
    const entry = this.deps.directory.channel(req.channelId);
    if (entry === undefined) return jsonReply(404, { ok: false, error: `channel "${req.channelId}" is not configured` });
    const account = this.deps.directory.account(req.channelId, req.accountId);
    if (account === undefined) return jsonReply(404, { ok: false, error: `channel "${req.channelId}" has no account "${req.accountId}"` });
    if (account.adapter.inbound?.webhook === undefined) {
      return jsonReply(404, { ok: false, error: `channel "${req.channelId}" (${entry.kind}) takes no webhooks with its settings` });
    }
    return [account];
  }

  /** The plugin's verdict; a plugin that throws (a bug) is this account's 500, not the service's. */
  private async verify(account: ChannelAccount, raw: RawInbound): Promise<InboundResult> {
    const endpoint = account.adapter.inbound?.webhook;
    if (endpoint === undefined) return { reply: jsonReply(404, { ok: false, error: "this account takes no webhooks" }), messages: [] };
    try {
      return await endpoint.handle(raw);
    } catch (err) {
      this.deps.logger.error({ err, channel: account.channelId, account: account.accountId }, "a channel's webhook handler failed");
      return { reply: jsonReply(500, { ok: false, error: "the webhook could not be handled" }), messages: [] };
    }
  }
}
