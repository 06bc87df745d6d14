/**
 * The web chat the edge serves at /chat: a `webchat` connection (docs/protocol.md) that chats
 * with an agent on the connection's own sessions, streams the answer as it is written, and
 * picks up where it was after a reconnect.
 */
import {
  type AgentAnswer,
  type AgentEntry,
  type AgentEvent,
  type ConnectAnswer,
  GatewayClient,
  GatewayRpcError,
  payloadText,
  type SessionPreview,
} from "@gw/client";
import { Threads } from "./threads.js";
import { byId, el, MessageView, scrollToEnd, setStatus } from "./view.js";

const SECRET_KEY = "gw.webchat.secret";
const AGENT_KEY = "gw.webchat.agent";
const NEEDS_SECRET_KEY = "gw.webchat.needsSecret";
const HISTORY_LIMIT = 100;
const MAX_BACKOFF_MS = 10_000;

interface ActiveRun {
  runId: string;
  sessionKey: string;
  view: MessageView;
  streamed: boolean;
}

const messages = byId<HTMLOListElement>("messages");
const input = byId<HTMLTextAreaElement>("input");
const sendButton = byId<HTMLButtonElement>("send");
const stopButton = byId<HTMLButtonElement>("stop");
const agentSelect = byId<HTMLSelectElement>("agent");

let client: GatewayClient | undefined;
let threads: Threads | undefined;
let current = "";
let agents: AgentEntry[] = [];
let run: ActiveRun | undefined;
let backoffMs = 500;

/** A token handed over in the URL (`/chat#token=...`) moves to this tab's storage and out of the URL. */
function takeTokenFromUrl(): void {
  const match = /^#token=(.+)$/.exec(location.hash);
  if (match === null) return;
  sessionStorage.setItem(SECRET_KEY, decodeURIComponent(match[1]!));
  history.replaceState(null, "", location.pathname + location.search);
}

function socketUrl(): string {
  const url = new URL("ws", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

function showLogin(error: string): void {
  byId("chat").hidden = true;
  byId("login").hidden = false;
  byId("login-error").textContent = error;
  byId<HTMLInputElement>("secret").focus();
}

async function connect(): Promise<void> {
  const secret = sessionStorage.getItem(SECRET_KEY) ?? undefined;
  if (secret === undefined && sessionStorage.getItem(NEEDS_SECRET_KEY) !== null) {
    setStatus("not connected", "error");
    return showLogin("");
  }
  setStatus("connecting…", "connecting");
  let socket: GatewayClient;
  try {
    socket = await GatewayClient.open(socketUrl(), (url) => new WebSocket(url));
  } catch {
    return retryLater();
  }
  let hello: ConnectAnswer;
  try {
    hello = await socket.request<ConnectAnswer>("connect", {
      role: "webchat",
      client: { name: "webchat", version: "1" },
      ...(secret === undefined ? {} : { auth: { token: secret } }),
    });
  } catch (err) {
    socket.close();
    const code = err instanceof GatewayRpcError ? err.code : "UNAVAILABLE";
    if (code === "UNAUTHORIZED" || code === "RATE_LIMITED" || code === "FORBIDDEN") {
      sessionStorage.removeItem(SECRET_KEY);
      // Every refused connect counts against this address (20 a minute): once the gateway has
      // said it needs a secret, reloads ask for one instead of trying without.
      if (code === "UNAUTHORIZED") sessionStorage.setItem(NEEDS_SECRET_KEY, "1");
      setStatus("not connected", "error");
      const why = code === "RATE_LIMITED" ? "Too many failed attempts from this address; wait a minute." : (err as Error).message;
      return showLogin(secret === undefined && code === "UNAUTHORIZED" ? "" : why);
    }
    return retryLater();
  }
  client = socket;
  backoffMs = 500;
  socket.onEvent(onEvent);
  socket.onClose(() => {
    client = undefined;
    setComposer(false);
    retryLater();
  });
  await onConnected(socket, hello);
}

function retryLater(): void {
  setStatus(`reconnecting in ${Math.round(backoffMs / 1000)} s…`, "error");
  setTimeout(() => void connect(), backoffMs);
  backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
}

async function onConnected(socket: GatewayClient, hello: ConnectAnswer): Promise<void> {
  const home = hello.session?.key;
  if (home === undefined) return showLogin("The gateway did not name this connection's session.");
  byId("login").hidden = true;
  byId("chat").hidden = false;
  setStatus(`connected (${hello.auth.method})`, "connected");
  if (threads?.home !== home) threads = new Threads(home, localStorage);
  await loadAgents(socket);
  renderThreads();
  await openThread(current !== "" && current.startsWith(home) ? current : threads.lastOpened());
  if (run !== undefined) await resumeRun(socket, run);
  byId<HTMLButtonElement>("new-thread").disabled = false;
  setComposer(true);
}

async function loadAgents(socket: GatewayClient): Promise<void> {
  const answer = await socket.request<{ agents: AgentEntry[]; defaultId?: string }>("agents.list");
  agents = answer.agents;
  const chosen = localStorage.getItem(AGENT_KEY);
  agentSelect.replaceChildren(
    ...agents.map((agent) => {
      const option = el("option", undefined, agent.name || agent.id);
      option.value = agent.id;
      option.title = `${agent.model}${agent.description ? ` — ${agent.description}` : ""}`;
      return option;
    }),
  );
  if (chosen !== null && agents.some((a) => a.id === chosen)) agentSelect.value = chosen;
  agentSelect.disabled = agents.length < 2;
}

function agentName(id: string | undefined): string {
  const agent = agents.find((a) => a.id === id) ?? agents.find((a) => a.id === agentSelect.value);
  return agent?.name || agent?.id || "assistant";
}

function renderThreads(): void {
  if (threads === undefined) return;
  byId("threads").replaceChildren(
    ...threads.list().map((thread) => {
      const button = el("button", undefined, thread.title);
      button.type = "button";
      button.dataset.key = thread.key;
      button.setAttribute("aria-current", String(thread.key === current));
      button.addEventListener("click", () => void openThread(thread.key));
      const item = el("li");
      item.append(button);
      return item;
    }),
  );
}

async function openThread(key: string): Promise<void> {
  current = key;
  threads?.open(key);
  renderThreads();
  messages.replaceChildren();
  if (client === undefined) return;
  try {
    const preview = await client.request<SessionPreview>("sessions.preview", { key, limit: HISTORY_LIMIT });
    if (current !== key) return;
    for (const message of [...preview.messages].reverse()) {
      const role = message.role === "user" ? "user" : "assistant";
      new MessageView(messages, role, role === "user" ? "You" : message.sender || agentName(preview.agentId), message.body);
    }
  } catch (err) {
    // A thread no run has used yet does not exist on the gateway: it starts empty.
    if (!(err instanceof GatewayRpcError && err.code === "NOT_FOUND")) {
      new MessageView(messages, "assistant", "gateway").note(`Could not load the history: ${(err as Error).message}`, "error");
    }
  }
  if (run !== undefined && run.sessionKey === key) messages.append(run.view.item);
  scrollToEnd(messages);
}

function setComposer(enabled: boolean): void {
  sendButton.disabled = !enabled || run !== undefined;
  stopButton.hidden = run === undefined;
  stopButton.disabled = !enabled;
}

async function send(text: string): Promise<void> {
  const socket = client;
  if (socket === undefined || run !== undefined || text.trim() === "") return;
  new MessageView(messages, "user", "You", text);
  threads?.titleFrom(current, text);
  renderThreads();
  const view = new MessageView(messages, "assistant", agentName(agentSelect.value));
  view.pending(true);
  const active: ActiveRun = { runId: crypto.randomUUID(), sessionKey: current, view, streamed: false };
  run = active;
  setComposer(true);
  scrollToEnd(messages);
  try {
    const answer = await socket.request<AgentAnswer>(
      "agent",
      { message: text, sessionKey: current, agentId: agentSelect.value || undefined, runId: active.runId },
      { timeoutMs: 0 },
    );
    finishRun(active, answer);
  } catch (err) {
    // A dropped connection is not the run's end: the reconnect asks how it went.
    if (err instanceof GatewayRpcError && err.code === "UNAVAILABLE" && !socket.isOpen) return;
    failRun(active, err);
  }
}

interface WaitAnswer {
  completed: boolean;
  status?: string;
  result?: { payloads: AgentAnswer["payloads"] };
  error?: { code?: string; message?: string };
}

/** After a reconnect: how did the run that was in flight end (it may still be going)? */
async function resumeRun(socket: GatewayClient, active: ActiveRun): Promise<void> {
  try {
    const answer = await socket.request<WaitAnswer>("agent.wait", { runId: active.runId, timeoutSeconds: 300 }, { timeoutMs: 0 });
    if (!answer.completed) failRun(active, new GatewayRpcError("TIMEOUT", "the run is still going after 5 minutes"));
    else if (answer.status === "error") failRun(active, new GatewayRpcError(answer.error?.code ?? "INTERNAL", answer.error?.message ?? "the run failed"));
    else finishRun(active, { runId: active.runId, payloads: answer.result?.payloads ?? [] });
  } catch (err) {
    if (!socket.isOpen) return;
    // NOT_FOUND: the request never reached the gateway before the connection dropped.
    failRun(active, err instanceof GatewayRpcError && err.code === "NOT_FOUND" ? new Error("not sent: the connection dropped; send it again") : err);
  }
}

function finishRun(active: ActiveRun, answer: AgentAnswer): void {
  const text = payloadText(answer.payloads);
  if (text !== "" && (!active.streamed || active.view.content !== text)) active.view.set(text);
  endRun(active);
}

function failRun(active: ActiveRun, err: unknown): void {
  const code = err instanceof GatewayRpcError ? err.code : "ERROR";
  active.view.note(code === "ABORTED" ? "Stopped." : `${code}: ${(err as Error).message}`, code === "ABORTED" ? "tool" : "error");
  endRun(active);
}

function endRun(active: ActiveRun): void {
  active.view.pending(false);
  if (run === active) run = undefined;
  setComposer(client !== undefined);
  scrollToEnd(messages);
}

function onEvent(event: string, payload: Record<string, unknown>): void {
  if (event !== "agent" || run === undefined) return;
  const { runId, stream, data } = payload as unknown as AgentEvent;
  if (runId !== run.runId) return;
  if (stream === "assistant" && typeof data.text === "string") {
    run.streamed = true;
    run.view.append(data.text);
  } else if (stream === "tool" && data.phase === "start") {
    run.view.note(`Using ${data.name ?? "a tool"}…`, "tool");
  } else if (stream === "tool" && data.phase === "error") {
    run.view.note(`${data.name ?? "A tool"} failed: ${data.error ?? ""}`, "error");
  }
  scrollToEnd(messages);
}

byId<HTMLFormElement>("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value;
  input.value = "";
  void send(text);
});
input.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  byId<HTMLFormElement>("composer").requestSubmit();
});
stopButton.addEventListener("click", () => {
  if (run !== undefined) void client?.request("chat.abort", { runId: run.runId }).catch(() => undefined);
});
agentSelect.addEventListener("change", () => localStorage.setItem(AGENT_KEY, agentSelect.value));
byId("new-thread").addEventListener("click", () => {
  if (threads === undefined) return;
  void openThread(threads.create().key);
  input.focus();
});
byId<HTMLFormElement>("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const secretInput = byId<HTMLInputElement>("secret");
  sessionStorage.setItem(SECRET_KEY, secretInput.value);
  secretInput.value = "";
  void connect();
});

takeTokenFromUrl();
void connect();
