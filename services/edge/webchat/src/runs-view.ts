/**
 * Runs: the runs in flight on every edge and runner (`runs.list`, kept live by the lifecycle
 * events every control connection receives), one followed live with `agent.subscribe`, resumed
 * after a drop from the last event seen, and stopped with `chat.abort`.
 */
import type { AgentEvent, ConnectAnswer, GatewayClient, RunInFlight } from "@gw/client";
import type { ControlView } from "./control.js";
import { MessageView } from "./message-view.js";
import { RunFollow } from "./run-follow.js";
import { button, byId, el, labelled, replaceKeepingFocus, showError, when } from "./view.js";

interface Followed {
  run: RunFollow;
  view: MessageView;
  status: HTMLElement;
  abort: HTMLButtonElement;
}

export class RunsView implements ControlView {
  private readonly root = byId("view-runs");
  private readonly listSection = el("section", "runs-list");
  private readonly rows = el("ul", "rows");
  private readonly runIdInput = el("input");
  private readonly panel = el("section", "detail");
  private client: GatewayClient | undefined;
  private canList = false;
  private runs: RunInFlight[] = [];
  private followed: Followed | undefined;
  private refreshing: Promise<void> | undefined;
  /** Runs started while a read was out, or while the tab was closed: the list is read again. */
  private stale = false;

  constructor() {
    this.rows.setAttribute("aria-label", "Runs in flight");
    this.listSection.append(el("h2", undefined, "In flight"), this.rows);
    this.runIdInput.id = "follow-run-id";
    this.runIdInput.placeholder = "run id";
    const form = el("form", "toolbar");
    const go = el("button", undefined, "Follow");
    go.type = "submit";
    form.append(labelled("Follow a run", this.runIdInput), go);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const runId = this.runIdInput.value.trim();
      if (runId !== "") void this.follow(runId).catch(showError);
    });
    this.panel.setAttribute("aria-label", "Followed run");
    this.panel.hidden = true;
    const split = el("div", "split");
    split.append(this.listSection, this.panel);
    this.root.append(form, split);
  }

  async up(client: GatewayClient, hello: ConnectAnswer): Promise<void> {
    this.client = client;
    // runs.list is newer than the rest of the protocol: without it the view follows runs by id.
    this.canList = hello.methods.includes("runs.list");
    this.listSection.hidden = !this.canList;
    const resumed = this.followed !== undefined && !this.followed.run.ended ? this.subscribe(this.followed) : Promise.resolve();
    await Promise.all([this.refresh(), resumed]);
  }

  down(): void {
    this.client = undefined;
    if (this.followed !== undefined && !this.followed.run.ended) this.followed.status.textContent = "connection lost; resuming…";
  }

  event(name: string, payload: Record<string, unknown>): void {
    if (name !== "agent") return;
    const event = payload as unknown as AgentEvent;
    if (event.stream === "lifecycle" && this.canList) {
      // A start names no session: the list is read again (once the tab is open, and one read
      // for any number of starts meanwhile). An end takes the run off at once.
      if (event.data.phase === "start") {
        if (this.root.hidden) this.stale = true;
        else void this.refresh().catch(showError);
      } else if (event.data.phase === "end" || event.data.phase === "error") {
        this.runs = this.runs.filter((run) => run.runId !== event.runId);
        this.render();
      }
    }
    if (this.followed !== undefined) this.apply(this.followed, event);
  }

  shown(): void {
    if (this.stale) void this.refresh().catch(showError);
  }

  /** One runs.list at a time; asked again while one is out, it reads once more after it. */
  private refresh(): Promise<void> {
    if (!this.canList || this.client === undefined) return Promise.resolve();
    if (this.refreshing !== undefined) {
      this.stale = true;
      return this.refreshing;
    }
    const client = this.client;
    this.stale = false;
    const read = client.request("runs.list", { limit: 200 }).then((answer) => {
      this.runs = answer.runs;
      this.render();
    });
    this.refreshing = read.finally(() => {
      this.refreshing = undefined;
      if (this.stale && !this.root.hidden) void this.refresh().catch(showError);
    });
    return this.refreshing;
  }

  private render(): void {
    const items = this.runs.map((run) => {
      const item = el("li", "run-row");
      item.dataset.runId = run.runId;
      const text = el("div");
      text.append(el("span", "key", run.sessionKey), el("span", "muted", `${run.agentId} · ${run.status} · since ${when(run.startedAt)} · ${run.runId}`));
      const follow = button("Follow", () => this.follow(run.runId), { title: `Follow run ${run.runId}` });
      follow.dataset.focus = `follow:${run.runId}`;
      const abort = button("Abort", () => this.abort(run.runId), { className: "danger", title: `Abort run ${run.runId}` });
      abort.dataset.focus = `abort:${run.runId}`;
      item.append(text, follow, abort);
      return item;
    });
    if (items.length === 0) items.push(el("li", "muted", "No runs in flight."));
    replaceKeepingFocus(this.rows, items);
  }

  private async follow(runId: string): Promise<void> {
    const output = el("ol", "messages");
    const status = el("p", "run-status", "following…");
    status.setAttribute("role", "status");
    const abort = button("Abort", () => this.abort(runId), { className: "danger", title: `Abort run ${runId}` });
    const view = new MessageView(output, "assistant", `Run ${runId}`);
    view.pending(true);
    const followed: Followed = { run: new RunFollow(runId), view, status, abort };
    const [previous, client] = [this.followed, this.client];
    if (previous !== undefined && !previous.run.ended && client !== undefined) {
      void client.request("agent.unsubscribe", { runId: previous.run.runId }).catch(() => undefined);
    }
    this.followed = followed;
    this.panel.replaceChildren(el("h2", undefined, `Run ${runId}`), status, abort, output);
    this.panel.hidden = false;
    await this.subscribe(followed);
  }

  /** Subscribes from the last event seen: the gateway sends what was missed, then the rest live. */
  private async subscribe(followed: Followed): Promise<void> {
    const client = this.client;
    if (client === undefined) return;
    const answer = await client.request("agent.subscribe", {
      runId: followed.run.runId,
      afterSeq: followed.run.lastSeq,
    });
    if (followed.run.ended) return;
    followed.status.textContent = "following…";
    if (!answer.subscribed) this.draw(followed, followed.run.finishedElsewhere(answer.status));
  }

  private apply(followed: Followed, event: AgentEvent): void {
    this.draw(followed, followed.run.apply(event));
  }

  private draw(followed: Followed, change: ReturnType<RunFollow["apply"]>): void {
    if (change === undefined) return;
    if (change.kind === "text") followed.view.append(change.text);
    else if (change.kind === "tool") followed.view.tool(change.data);
    else {
      followed.view.pending(false);
      followed.abort.hidden = true;
      const words = { ok: "finished", error: "failed", aborted: "aborted", following: "following…" }[change.state];
      followed.status.textContent = change.error === undefined ? words : `${words}: ${change.error}`;
      followed.status.dataset.state = change.state;
    }
  }

  private async abort(runId: string): Promise<void> {
    if (this.client === undefined) throw new Error("The control connection is down; it reconnects by itself.");
    await this.client.request("chat.abort", { runId });
  }
}
