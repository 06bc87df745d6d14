/**
 * Channels: `channels.status` of every channel and account (reachable, last success and error,
 * rate limit, last inbound message and inbound error), read again every few seconds while the
 * tab is open; the gateway sends no event when a probe's answer changes.
 */
import type { ChannelView } from "@gw/client";
import { PolledView } from "./polled-view.js";
import { button, byId, el, when } from "./view.js";

const REFRESH_MS = 5_000;

export class ChannelsView extends PolledView {
  private readonly table = el("div", "channels");
  private readonly updated = el("span", "muted");

  constructor() {
    super(byId("view-channels"), REFRESH_MS);
    const toolbar = el("div", "toolbar");
    toolbar.append(button("Refresh", () => this.load()), this.updated);
    this.root.append(toolbar, this.table);
  }

  protected async load(): Promise<void> {
    if (this.client === undefined) return;
    const answer = await this.client.request("channels.status");
    this.render(answer.channels);
    this.updated.textContent = `as of ${new Date().toLocaleTimeString()}`;
  }

  private render(channels: readonly ChannelView[]): void {
    if (channels.length === 0) {
      this.table.replaceChildren(el("p", "muted", "No channels are configured."));
      return;
    }
    this.table.replaceChildren(...channels.map((channel) => this.card(channel)));
  }

  private card(channel: ChannelView): HTMLElement {
    const card = el("section", "card");
    card.dataset.channel = channel.id;
    card.setAttribute("aria-label", `Channel ${channel.id}`);
    const flags = [channel.kind, channel.default ? "default" : "", channel.polls ? "polls" : "", `${channel.textChunk} chars a message`].filter(Boolean);
    card.append(el("h2", undefined, channel.id), el("p", "muted", flags.join(" · ")));
    for (const account of channel.accounts) card.append(this.account(account));
    return card;
  }

  private account(a: ChannelView["accounts"][number]): HTMLElement {
    const box = el("dl", "account");
    box.dataset.account = a.accountId;
    const state = !a.configured ? "not configured" : a.reachable ? "reachable" : "unreachable";
    const limited = a.rateLimitedUntil !== null && a.rateLimitedUntil > Date.now() ? `rate limited until ${when(a.rateLimitedUntil)}` : "not rate limited";
    const facts: Array<[string, string, string?]> = [
      ["Account", `${a.accountId}${a.identity ? ` (${a.identity})` : ""}`],
      ["State", state, a.reachable ? "ok" : "bad"],
      ["Last probe", when(a.probedAt)],
      ["Last success", when(a.lastSuccessAt)],
      ["Last error", a.lastError === null ? "—" : `${a.lastError} (${when(a.lastErrorAt)})`, a.lastError === null ? undefined : "bad"],
      ["Limits", limited],
      ["Last inbound", when(a.lastInboundAt)],
      ["Last inbound error", a.lastInboundError === null ? "—" : `${a.lastInboundError} (${when(a.lastInboundErrorAt)})`, a.lastInboundError === null ? undefined : "bad"],
    ];
    for (const [term, value, tone] of facts) {
      const dd = el("dd", tone, value);
      box.append(el("dt", undefined, term), dd);
    }
    return box;
  }
}
