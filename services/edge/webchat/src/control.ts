/**
 * The control view: a `control` connection beside the chat's, opened with the same credential,
 * and the tabs that switch between the chat and the views built on it. Every view reloads when
 * the connection comes back and hears every event, so what it shows stays live.
 */
import type { ConnectAnswer, GatewayClient } from "@gw/client";
import { ApprovalsView } from "./approvals-view.js";
import { ChannelsView } from "./channels-view.js";
import { CronView } from "./cron-view.js";
import { Link } from "./link.js";
import { RunsView } from "./runs-view.js";
import { SessionsView } from "./sessions-view.js";
import { byId, setStatus, showError } from "./view.js";

export interface ControlView {
  up(client: GatewayClient, hello: ConnectAnswer): Promise<void>;
  down(): void;
  event(name: string, payload: Record<string, unknown>): void;
  /** The tab was opened. */
  shown?(): void;
}

const TABS = ["chat", "sessions", "runs", "channels", "cron", "approvals"] as const;
type Tab = (typeof TABS)[number];

export class Control {
  private started = false;
  private readonly link: Link;
  private readonly views: Record<Exclude<Tab, "chat">, ControlView>;

  constructor(secret: () => string | undefined) {
    this.views = { sessions: new SessionsView(), runs: new RunsView(), channels: new ChannelsView(), cron: new CronView(), approvals: new ApprovalsView() };
    this.link = new Link("control", secret, {
      up: (client, hello) => this.up(client, hello),
      down: (retryInMs) => {
        for (const view of Object.values(this.views)) view.down();
        setStatus(`control: reconnecting in ${Math.round(retryInMs / 1000)} s…`, "error", "control-status");
      },
      // FORBIDDEN: this user may chat but not control; the tabs stay hidden.
      refused: () => undefined,
      event: (name, payload) => {
        for (const view of Object.values(this.views)) view.event(name, payload);
      },
    });
    for (const tab of TABS) byId(`tab-${tab}`).addEventListener("click", () => this.select(tab));
    byId("tabs").addEventListener("keydown", (event) => this.arrowKeys(event));
  }

  /** Opens the control connection once the chat's is up (so a wrong secret is refused only once). */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.link.open().catch(showError);
  }

  private async up(client: GatewayClient, hello: ConnectAnswer): Promise<void> {
    byId("tabs").hidden = false;
    setStatus("control: connected", "connected", "control-status");
    const loads = await Promise.allSettled(Object.values(this.views).map((view) => view.up(client, hello)));
    for (const load of loads) if (load.status === "rejected") showError(load.reason);
  }

  private select(tab: Tab): void {
    for (const other of TABS) {
      const selected = other === tab;
      const button = byId(`tab-${other}`);
      button.setAttribute("aria-selected", String(selected));
      button.tabIndex = selected ? 0 : -1;
      byId(`view-${other}`).hidden = !selected;
    }
    // The agent picker is the chat's.
    byId("agent-picker").hidden = tab !== "chat";
    if (tab !== "chat") this.views[tab].shown?.();
  }

  /** Left and right arrows move between tabs (the WAI-ARIA tabs pattern). */
  private arrowKeys(event: KeyboardEvent): void {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const current = TABS.findIndex((tab) => byId(`tab-${tab}`).getAttribute("aria-selected") === "true");
    const next = TABS[(current + (event.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length]!;
    this.select(next);
    byId(`tab-${next}`).focus();
    event.preventDefault();
  }
}
