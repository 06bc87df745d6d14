/**
 * Sessions: every session, newest first, a page at a time, filtered by agent and searched by
 * key; one opened shows its settings and newest messages and can be patched, reset, compacted or
 * deleted (each loss of history asks first). Created and patched sessions arrive live.
 */
import { type AgentEntry, type ConnectAnswer, type GatewayClient, GatewayRpcError, type SessionPreview } from "@gw/client";
import type { ControlView } from "./control.js";
import { PAGE_SIZE, type SessionList as List, SessionList } from "./session-list.js";
import { button, byId, clearError, confirmInline, el, labelled, option, replaceKeepingFocus, showError, when } from "./view.js";

const PREVIEW_LIMIT = 20;

export class SessionsView implements ControlView {
  private readonly root = byId("view-sessions");
  private readonly agentFilter = el("select");
  private readonly search = el("input");
  private readonly count = el("span", "count");
  private readonly rows = el("ul", "rows");
  private readonly more = button("Load more", () => this.loadPage());
  private readonly detail = el("section", "detail");
  private client: GatewayClient | undefined;
  private agents: AgentEntry[] = [];
  private list: List = new SessionList();
  private openKey: string | undefined;

  constructor() {
    this.agentFilter.id = "sessions-agent";
    this.search.id = "sessions-search";
    this.search.type = "search";
    this.search.placeholder = "part of a key";
    this.agentFilter.addEventListener("change", () => void this.reload().catch(showError));
    this.search.addEventListener("input", () => this.render());
    this.rows.setAttribute("aria-label", "Sessions");
    this.detail.setAttribute("aria-label", "Session");
    this.detail.hidden = true;
    const toolbar = el("div", "toolbar");
    toolbar.append(labelled("Agent", this.agentFilter), labelled("Search by key", this.search), this.count);
    const listColumn = el("div", "list-column");
    listColumn.append(this.rows, this.more);
    const split = el("div", "split");
    split.append(listColumn, this.detail);
    this.root.append(toolbar, split);
  }

  async up(client: GatewayClient, _hello: ConnectAnswer): Promise<void> {
    this.client = client;
    const answer = await client.request("agents.list");
    this.agents = answer.agents;
    const chosen = this.agentFilter.value;
    this.agentFilter.replaceChildren(option("", "All agents"), ...this.agents.map((a) => option(a.id, a.name || a.id)));
    this.agentFilter.value = this.agents.some((a) => a.id === chosen) ? chosen : "";
    await this.reload();
    if (this.openKey !== undefined) await this.open(this.openKey);
  }

  down(): void {
    this.client = undefined;
  }

  event(name: string, payload: Record<string, unknown>): void {
    const key = String(payload.key ?? "");
    if (name === "session.created") {
      if (this.list.created(key, String(payload.agentId ?? ""), Date.now())) this.render();
    } else if (name === "session.updated") {
      const changes = (payload.changes ?? {}) as Record<string, string>;
      if (this.list.updated(key, changes, Date.now())) this.render();
      if (key === this.openKey) void this.open(key).catch(showError);
    }
  }

  private async reload(): Promise<void> {
    this.list = new SessionList(this.agentFilter.value);
    await this.loadPage();
  }

  private async loadPage(): Promise<void> {
    const client = this.need();
    const list = this.list;
    const agentId = list.agentId === "" ? {} : { agentId: list.agentId };
    const page = await client.request("sessions.list", { ...agentId, limit: PAGE_SIZE, offset: list.nextOffset });
    if (list !== this.list) return; // the filter changed meanwhile
    list.addPage(page.sessions, page.total);
    this.render();
  }

  private render(): void {
    const shown = this.list.matching(this.search.value);
    const items = shown.map((row) => {
      const open = el("button", "row-button");
      open.type = "button";
      open.dataset.key = row.key;
      open.dataset.focus = row.key;
      open.setAttribute("aria-current", String(row.key === this.openKey));
      open.append(el("span", "key", row.key), el("span", "muted", `${row.agentId} · ${row.model || "—"} · ${row.messageCount} messages · ${when(row.updatedAt)}`));
      open.addEventListener("click", () => void this.open(row.key).catch(showError));
      const item = el("li");
      item.append(open);
      return item;
    });
    const typed = this.search.value.trim();
    if (typed !== "" && !shown.some((row) => row.key === typed)) {
      // Search covers the pages held; an exact key of any session opens directly.
      const item = el("li");
      item.append(button(`Open ${typed}`, () => this.open(typed), { className: "secondary" }));
      items.push(item);
    }
    replaceKeepingFocus(this.rows, items);
    this.count.textContent = `${this.list.size} sessions`;
    this.more.hidden = !this.list.hasMore;
  }

  private async open(key: string): Promise<void> {
    const client = this.need();
    let preview: SessionPreview & { thinking?: string; messageCount?: number; createdAt?: number; updatedAt?: number };
    try {
      preview = await client.request("sessions.preview", { key, limit: PREVIEW_LIMIT });
    } catch (err) {
      if (err instanceof GatewayRpcError && err.code === "NOT_FOUND") throw new Error(`No session ${key}.`, { cause: err });
      throw err;
    }
    clearError();
    this.openKey = key;
    this.renderDetail(preview);
    this.render();
  }

  private renderDetail(preview: SessionPreview & { thinking?: string; messageCount?: number; updatedAt?: number }): void {
    const { key } = preview;
    const heading = el("h2", undefined, key);
    const facts = el("p", "muted", `${preview.messageCount ?? preview.messages.length} messages · updated ${when(preview.updatedAt)}`);
    const agent = el("select");
    agent.append(...this.agents.map((a) => option(a.id, a.name || a.id)));
    agent.value = preview.agentId;
    const model = el("input");
    model.value = preview.model;
    model.placeholder = "provider/model";
    const thinking = el("select");
    thinking.append(option("", preview.thinking ? `unchanged (${preview.thinking})` : "unchanged"), option("low"), option("medium"), option("high"));
    const form = el("form", "patch");
    form.setAttribute("aria-label", "Settings");
    const save = el("button", undefined, "Save");
    save.type = "submit";
    form.append(labelled("Agent", agent), labelled("Model", model), labelled("Thinking", thinking), save);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const changes = {
        ...(agent.value !== preview.agentId ? { agentId: agent.value } : {}),
        ...(model.value.trim() !== preview.model ? { model: model.value.trim() } : {}),
        ...(thinking.value !== "" ? { thinking: thinking.value } : {}),
      };
      void this.need()
        .request("sessions.patch", { key, ...changes })
        .then(() => this.open(key))
        .catch(showError);
    });
    const actions = el("div", "actions");
    const ask = (label: string, question: string, run: () => Promise<void>) => {
      const trigger: HTMLButtonElement = button(label, () => confirmInline(trigger, question, label, run), { className: "danger" });
      return trigger;
    };
    actions.append(
      ask("Reset", `Clear the history of ${key}?`, async () => {
        await this.need().request("sessions.reset", { key });
        await this.open(key);
      }),
      ask("Compact", `Replace the older history of ${key} with a summary?`, async () => {
        const res = await this.need().request("sessions.compact", { key }, { timeoutMs: 120_000 });
        await this.open(key);
        if (!res.compacted) showError(new Error(`${key} was not compacted: a summary would not make it smaller.`));
      }),
      ask("Delete", `Delete ${key} and its history?`, () => this.delete(key)),
    );
    const messages = el("ol", "preview");
    messages.setAttribute("aria-label", "Newest messages");
    for (const message of [...preview.messages].reverse()) {
      const item = el("li", `preview-message ${message.role}`);
      item.append(el("span", "muted", `${message.sender || message.role} · ${when(message.timestamp)}`), el("div", "text", message.body));
      messages.append(item);
    }
    this.detail.replaceChildren(heading, facts, form, actions, messages);
    this.detail.hidden = false;
  }

  private async delete(key: string): Promise<void> {
    await this.need().request("sessions.delete", { key });
    this.list.removed(key);
    this.openKey = undefined;
    this.detail.hidden = true;
    this.detail.replaceChildren();
    this.render();
  }

  private need(): GatewayClient {
    if (this.client === undefined) throw new Error("The control connection is down; it reconnects by itself.");
    return this.client;
  }
}
