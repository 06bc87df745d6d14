/**
 * The chat: talks with an agent on the `webchat` connection's own sessions, streams the answer
 * as it is written (Markdown, tool cards), and after a reconnect asks how the run in flight
 * ended.
 */
import {
  type AgentAnswer,
  type AgentEntry,
  type AgentEvent,
  type ConnectAnswer,
  type GatewayClient,
  GatewayRpcError,
  payloadText,
} from "@gw/client";
import { MessageView } from "./message-view.js";
import { Threads } from "./threads.js";
import { byId, el, scrollToEnd, showError } from "./view.js";

const AGENT_KEY = "gw.webchat.agent";
const HISTORY_LIMIT = 100;

interface ActiveRun {
  runId: string;
  sessionKey: string;
  view: MessageView;
  streamed: boolean;
  startedAt: number;
  firstTextAt?: number;
  model: string;
}

export class Chat {
  private readonly messages = byId<HTMLOListElement>("messages");
  private readonly input = byId<HTMLTextAreaElement>("input");
  private readonly sendButton = byId<HTMLButtonElement>("send");
  private readonly stopButton = byId<HTMLButtonElement>("stop");
  private readonly agentSelect = byId<HTMLSelectElement>("agent");
  private client: GatewayClient | undefined;
  private threads: Threads | undefined;
  private current = "";
  /** The model the open thread's session runs on (sessions.preview), for an answer's details. */
  private currentModel = "";
  private agents: AgentEntry[] = [];
  private run: ActiveRun | undefined;

  constructor() {
    byId<HTMLFormElement>("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      // Enter submits past a disabled Send button: until the thread is open (connected and
      // loaded) the text stays in the box, or it would go to no thread and be wiped by the load.
      if (this.sendButton.disabled) return;
      const text = this.input.value;
      this.input.value = "";
      void this.send(text).catch(showError);
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      byId<HTMLFormElement>("composer").requestSubmit();
    });
    this.stopButton.addEventListener("click", () => {
      const [run, client] = [this.run, this.client];
      // A run that ended meanwhile cannot be stopped; its answer says how it ended.
      if (run !== undefined && client !== undefined) void client.request("chat.abort", { runId: run.runId }).catch(() => undefined);
    });
    this.agentSelect.addEventListener("change", () => localStorage.setItem(AGENT_KEY, this.agentSelect.value));
    byId("new-thread").addEventListener("click", () => {
      if (this.threads === undefined) return;
      void this.openThread(this.threads.create().key).catch(showError);
      this.input.focus();
    });
    this.setComposer(false);
  }

  /** The webchat connection is up (again): load agents and the open thread, resume a run. */
  async up(socket: GatewayClient, hello: ConnectAnswer): Promise<void> {
    const home = hello.session?.key;
    if (home === undefined) throw new Error("The gateway did not name this connection's session.");
    this.client = socket;
    if (this.threads?.home !== home) this.threads = new Threads(home, localStorage);
    await this.loadAgents(socket);
    this.renderThreads();
    await this.openThread(this.current !== "" && this.current.startsWith(home) ? this.current : this.threads.lastOpened());
    if (this.run !== undefined) await this.resumeRun(socket, this.run);
    byId<HTMLButtonElement>("new-thread").disabled = false;
    this.setComposer(true);
  }

  down(): void {
    this.client = undefined;
    this.setComposer(false);
  }

  private async loadAgents(socket: GatewayClient): Promise<void> {
    const answer = await socket.request("agents.list");
    this.agents = answer.agents;
    const chosen = localStorage.getItem(AGENT_KEY);
    this.agentSelect.replaceChildren(
      ...this.agents.map((agent) => {
        const option = el("option", undefined, agent.name || agent.id);
        option.value = agent.id;
        option.title = `${agent.model}${agent.description ? ` — ${agent.description}` : ""}`;
        return option;
      }),
    );
    if (chosen !== null && this.agents.some((a) => a.id === chosen)) this.agentSelect.value = chosen;
    this.agentSelect.disabled = this.agents.length < 2;
  }

  private agent(id: string | undefined): AgentEntry | undefined {
    return this.agents.find((a) => a.id === id) ?? this.agents.find((a) => a.id === this.agentSelect.value);
  }

  private agentName(id: string | undefined): string {
    const agent = this.agent(id);
    return agent?.name || agent?.id || "assistant";
  }

  private renderThreads(): void {
    if (this.threads === undefined) return;
    byId("threads").replaceChildren(
      ...this.threads.list().map((thread) => {
        const button = el("button", undefined, thread.title);
        button.type = "button";
        button.dataset.key = thread.key;
        button.setAttribute("aria-current", String(thread.key === this.current));
        button.addEventListener("click", () => void this.openThread(thread.key).catch(showError));
        const item = el("li");
        item.append(button);
        return item;
      }),
    );
  }

  private async openThread(key: string): Promise<void> {
    this.current = key;
    this.currentModel = "";
    this.threads?.open(key);
    this.renderThreads();
    this.messages.replaceChildren();
    if (this.client === undefined) return;
    try {
      const preview = await this.client.request("sessions.preview", { key, limit: HISTORY_LIMIT });
      if (this.current !== key) return;
      this.currentModel = preview.model;
      for (const message of [...preview.messages].reverse()) {
        const role = message.role === "user" ? "user" : "assistant";
        const view = new MessageView(this.messages, role, role === "user" ? "You" : message.sender || this.agentName(preview.agentId), message.body);
        view.attachments(message.attachments ?? []);
      }
    } catch (err) {
      // A thread no run has used yet does not exist on the gateway: it starts empty.
      if (!(err instanceof GatewayRpcError && err.code === "NOT_FOUND")) {
        new MessageView(this.messages, "assistant", "gateway").note(`Could not load the history: ${(err as Error).message}`, "error");
      }
    }
    if (this.run !== undefined && this.run.sessionKey === key) this.messages.append(this.run.view.item);
    scrollToEnd(this.messages);
  }

  private setComposer(enabled: boolean): void {
    this.sendButton.disabled = !enabled || this.run !== undefined;
    this.stopButton.hidden = this.run === undefined;
    this.stopButton.disabled = !enabled;
  }

  private async send(text: string): Promise<void> {
    const socket = this.client;
    if (socket === undefined || this.run !== undefined || text.trim() === "") return;
    new MessageView(this.messages, "user", "You", text);
    this.threads?.titleFrom(this.current, text);
    this.renderThreads();
    const agentId = this.agentSelect.value || undefined;
    const view = new MessageView(this.messages, "assistant", this.agentName(agentId));
    view.pending(true);
    const model = this.currentModel || this.agent(agentId)?.model || "";
    const active: ActiveRun = { runId: crypto.randomUUID(), sessionKey: this.current, view, streamed: false, startedAt: performance.now(), model };
    this.run = active;
    this.setComposer(true);
    scrollToEnd(this.messages);
    try {
      const answer = await socket.request("agent", { message: text, sessionKey: this.current, agentId, runId: active.runId }, { timeoutMs: 0 });
      this.finishRun(active, answer);
    } catch (err) {
      // A dropped connection is not the run's end: the reconnect asks how it went.
      if (err instanceof GatewayRpcError && err.code === "UNAVAILABLE" && !socket.isOpen) return;
      this.failRun(active, err);
    }
  }

  /** After a reconnect: how did the run that was in flight end (it may still be going)? */
  private async resumeRun(socket: GatewayClient, active: ActiveRun): Promise<void> {
    try {
      const answer = await socket.request("agent.wait", { runId: active.runId, timeoutSeconds: 300 }, { timeoutMs: 0 });
      if (!answer.completed) this.failRun(active, new GatewayRpcError("TIMEOUT", "the run is still going after 5 minutes"));
      else if (answer.status === "error") this.failRun(active, new GatewayRpcError(answer.error?.code ?? "INTERNAL", answer.error?.message ?? "the run failed"));
      else {
        // The run wrote its turn (message and answer) to the history before it ended, and the
        // history loaded at the reconnect may hold it already: show the thread as stored rather
        // than the answer a second time beside it.
        this.endRun(active);
        if (this.current === active.sessionKey) await this.openThread(active.sessionKey);
      }
    } catch (err) {
      if (!socket.isOpen) return;
      // NOT_FOUND: the request never reached the gateway before the connection dropped.
      this.failRun(active, err instanceof GatewayRpcError && err.code === "NOT_FOUND" ? new Error("not sent: the connection dropped; send it again") : err);
    }
  }

  private finishRun(active: ActiveRun, answer: AgentAnswer): void {
    const text = payloadText(answer.payloads);
    if (text !== "" && (!active.streamed || active.view.content !== text)) active.view.set(text);
    active.view.images(answer.payloads);
    this.endRun(active);
  }

  private failRun(active: ActiveRun, err: unknown): void {
    const code = err instanceof GatewayRpcError ? err.code : "ERROR";
    active.view.note(code === "ABORTED" ? "Stopped." : `${code}: ${(err as Error).message}`, code === "ABORTED" ? "tool" : "error");
    this.endRun(active);
  }

  private endRun(active: ActiveRun): void {
    active.view.pending(false);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const total = seconds(performance.now() - active.startedAt);
    const first = active.firstTextAt === undefined ? "" : `, first words after ${seconds(active.firstTextAt - active.startedAt)}`;
    active.view.setMeta(`${active.model || "model unknown"} · ${total}${first}`);
    if (this.run === active) this.run = undefined;
    this.setComposer(this.client !== undefined);
    scrollToEnd(this.messages);
  }

  event(name: string, payload: Record<string, unknown>): void {
    const run = this.run;
    if (name === "session.updated" && payload.key === this.current) {
      const model = (payload.changes as Record<string, string> | undefined)?.model;
      if (model !== undefined) this.currentModel = model;
    }
    if (name !== "agent" || run === undefined) return;
    const { runId, stream, data } = payload as unknown as AgentEvent;
    if (runId !== run.runId) return;
    if (stream === "assistant" && typeof data.text === "string") {
      run.streamed = true;
      run.firstTextAt ??= performance.now();
      run.view.append(data.text);
    } else if (stream === "tool") {
      run.view.tool(data);
    }
    scrollToEnd(this.messages);
  }
}
