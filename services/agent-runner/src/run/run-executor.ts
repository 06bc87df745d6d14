import { beginSpan, type Bus, currentRequestId, type Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { RunRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { RunRegistry } from "@gw/runs";
import type { AgentConfig, AgentDirectory } from "../agent-directory.js";
import type { Thinking } from "../providers/model-provider.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import { runAgentLoop } from "./agent-loop.js";
import type { AnswerDelivery } from "./answer-delivery.js";
import { clientRequest } from "./client-request.js";
import { fromRunMessage, runImages, toolResultTurn, userMessage } from "./conversation.js";
import { checkImageInput } from "./image-input.js";
import { InboxReader } from "./inbox-reader.js";
import { RunAborted, RunNotOurs, RunTimedOut, runFailure } from "./run-errors.js";
import { RunEventPublisher } from "./run-event-publisher.js";
import { announce, type ExecutedRun, finalOutcome, type RunFacts, routeData } from "./run-outcome.js";
import { messageToEntry, type SessionClient, type SessionView } from "./session-client.js";
import type { SessionLocks } from "./session-lock.js";

export interface ExecutorDeps {
  runnerId: string;
  settings: GatewayConfig["runner"];
  bus: Bus;
  subjects: Subjects;
  registry: RunRegistry;
  directory: AgentDirectory;
  providers: ProviderRegistry;
  tools: ToolRegistry;
  sessions: SessionClient;
  delivery: AnswerDelivery;
  locks: SessionLocks;
  logger: Logger;
  /** Live runs on this runner, so an abort broadcast finds its controller. */
  active: Map<string, AbortController>;
  /** Told of every run this runner finished (metrics). */
  observer?: RunObserver;
}

/** What the per-run log line and the run metrics say of a finished run. */
export interface RunSummary {
  runId: string;
  agentId: string;
  /** `<provider>/<model>` the run called (empty when it failed before choosing one). */
  model: string;
  runnerId: string;
  durationMs: number;
  /** "ok", or the error code the run ended with (ABORTED, TIMEOUT, MODEL_ERROR, ...). */
  outcome: string;
}

export interface RunObserver {
  finished(summary: RunSummary): void;
}

const HEARTBEAT_MS = 2_000;

const THINKING = new Set(["low", "medium", "high", "extended"]);

function asThinking(value: string | undefined): Thinking | undefined {
  return value !== undefined && THINKING.has(value) ? (value as Thinking) : undefined;
}

/** Whether this execution took the session's run lock (only then does it release it). */
interface SessionLock {
  held: boolean;
}

async function loadLocked(deps: ExecutorDeps, req: RunRequest, lock: SessionLock, signal: AbortSignal): Promise<SessionView> {
  // Runs on one session take turns, others run in parallel.
  await deps.locks.acquire(req.sessionKey, req.runId, signal);
  lock.held = true;
  // A new session is bound to the requested agent (sessions.get's "": the default).
  return deps.sessions.load(req.sessionKey, req.agentId ?? "", signal);
}

/** A stateless run's conversation comes with the request; there is no session to read or lock. */
function ephemeralSession(req: RunRequest): SessionView {
  return { agentId: "", model: "", thinking: "", summary: "", messages: req.history.map(fromRunMessage) };
}

/**
 * The agent that answers: the requested one, else the one bound to the session (SPEC §2;
 * sessions.patch moves it), else the default (also for a session whose agent was since removed).
 */
function answeringAgent(deps: ExecutorDeps, requested: AgentConfig | undefined, session: SessionView): AgentConfig {
  return requested ?? deps.directory.find(session.agentId) ?? deps.directory.get("");
}

/**
 * The lifecycle `start`, once per run: sent when the run knows its agent and the model it asks
 * first, before any output; a run that fails earlier sends it, without a model, before its error.
 */
function startLifecycle(events: RunEventPublisher, facts: RunFacts, data: { agentId: string; model?: string }): void {
  if (facts.started) return;
  facts.started = true;
  events.emit("lifecycle", { phase: "start", ...(data.agentId ? { agentId: data.agentId } : {}), ...(data.model ? { model: data.model } : {}) });
}

/** `confirmed` settles once the claim is read: tools and session writes wait for it. */
async function execute(
  deps: ExecutorDeps,
  req: RunRequest,
  events: RunEventPublisher,
  signal: AbortSignal,
  confirmed: Promise<unknown>,
  lock: SessionLock,
  facts: RunFacts,
): Promise<ExecutedRun> {
  if (req.deliver) await deps.delivery.check(req);
  // An unknown agent fails the run before it waits for the session.
  const requested = req.agentId === undefined ? undefined : deps.directory.get(req.agentId);
  const session = req.ephemeral ? ephemeralSession(req) : await loadLocked(deps, req, lock, signal);
  const agent = answeringAgent(deps, requested, session);
  facts.agentId = agent.id;
  // The session's model is its bound agent's (sessions.patch, or that agent's at creation): another
  // agent answering on the session (a binding moved the chat, an explicit agentId) uses its own.
  const sessionModel = session.agentId === agent.id ? session.model : "";
  facts.model = req.model || sessionModel || agent.model;
  const { provider, model, route, firstChoice } = deps.providers.resolve(facts.model);
  facts.route = route;
  startLifecycle(events, facts, { agentId: agent.id, model: await firstChoice() });
  const thinking = asThinking(req.thinking) ?? asThinking(session.thinking);
  if (thinking) events.emit("lifecycle", { phase: "thinking" });
  const system = [req.extraSystemPrompt, agent.systemPrompt ?? "", session.summary].filter(Boolean).join("\n\n");
  const turn = req.toolResults.length
    ? toolResultTurn(session.messages, req.toolCallTurn, req.toolResults)
    : [userMessage(req.message, runImages(req.attachments))];
  const history = checkImageInput(deps.providers.textOnlyModel(facts.model), session.messages, turn);
  const inbox = req.ephemeral ? undefined : new InboxReader(deps.registry.inbox, req.runId);
  const result = await runAgentLoop({
    provider,
    model,
    system,
    history,
    turn,
    thinking,
    ...clientRequest(req, deps.tools.specs(agent.tools)),
    toolAllow: agent.tools,
    tools: deps.tools,
    maxToolRounds: deps.settings.maxToolRounds,
    events,
    ctx: { signal, agentId: agent.id, sessionKey: req.sessionKey, runId: req.runId },
    confirmed,
    ...(inbox ? { inbox } : {}),
  });
  await confirmed;
  signal.throwIfAborted();
  if (!req.ephemeral) {
    const senders = { user: req.sender || "user", assistant: agent.name };
    // Messages left out of the turn's input (a queue cap) come first: they were written before it.
    const context = (inbox?.context ?? []).map((e) => messageToEntry({ role: "user", content: e.text }, req.runId, { ...senders, user: e.sender }));
    await deps.sessions.append(req.sessionKey, agent.id, [...context, ...result.added.map((m) => messageToEntry(m, req.runId, senders))]);
  }
  if (req.deliver && result.text.trim() !== "") await deps.delivery.enqueue(req, result.text);
  return { ...result, steered: inbox?.steered ?? [] };
}

type Claim = NonNullable<Awaited<ReturnType<RunRegistry["beginClaim"]>>>;

/**
 * Reads the claim (is the run still queued, was it aborted meanwhile?) while the run already
 * starts: nothing of the run leaves the runner (events, tool calls, session writes) until the
 * claim confirms it. A run that is no longer ours is stopped and leaves no trace but a model
 * request that was already on its way.
 */
function confirmClaim(
  deps: ExecutorDeps,
  req: RunRequest,
  controller: AbortController,
  events: RunEventPublisher,
  log: Logger,
  taken: () => void,
): Promise<Claim | null> {
  return deps.registry.beginClaim(req.runId, deps.runnerId, req.nonce || undefined).then(
    (claim) => {
      // Ours or not runnable, either way settled: the queue may let go of the request. Called
      // before the held events are released, so the ack leaves in the same write as they do.
      taken();
      if (claim === null) {
        // already finished (timed out at the edge, or aborted) or expired
        controller.abort(new RunNotOurs());
        return null;
      }
      if (claim.abortRequested) controller.abort(new RunAborted());
      events.release();
      return claim;
    },
    (err: unknown) => {
      log.error({ err }, "cannot claim the run");
      controller.abort(new RunNotOurs());
      return null;
    },
  );
}

/**
 * One run on this runner: claim, heartbeat, execute, record the outcome, then the terminal event.
 * `taken` tells the run queue the claim has settled (the run queue's RunHandler).
 */
export async function executeRun(deps: ExecutorDeps, req: RunRequest, taken: () => void = () => undefined): Promise<void> {
  const log = deps.logger.child({ runId: req.runId });
  const controller = new AbortController();
  deps.active.set(req.runId, controller);
  const events = new RunEventPublisher(deps.bus, deps.subjects, req, { held: true });
  const confirmed = confirmClaim(deps, req, controller, events, log, taken);
  const seconds = Math.min(req.timeoutSeconds || deps.settings.defaultTimeoutSeconds, deps.settings.maxTimeoutSeconds);
  const timer = setTimeout(() => controller.abort(new RunTimedOut(seconds)), seconds * 1000);
  let beat: NodeJS.Timeout | undefined;
  // Its failure is the run's to handle (it awaits `confirmed` below); the heartbeat only starts.
  confirmed.then(
    (claim) => {
      if (claim === null) return;
      beat = setInterval(() => {
        void deps.registry.heartbeat(req.runId, deps.runnerId).catch((err) => log.warn({ err }, "heartbeat failed"));
        if (!req.ephemeral) void deps.registry.refreshSessionLock(req.sessionKey, req.runId).catch(() => undefined);
      }, HEARTBEAT_MS);
    },
    () => undefined,
  );
  const lock: SessionLock = { held: false };
  const started = performance.now();
  // The run's span: a child of the request that queued it, whichever runner takes it.
  const span = beginSpan("agent-runner", "agent run", "consumer")?.set("gw.run.id", req.runId).set("gw.runner.id", deps.runnerId);
  const facts: RunFacts = { agentId: req.agentId ?? "", model: req.model ?? "" };
  const summarize = (result: string) => {
    const summary: RunSummary = {
      runId: req.runId,
      agentId: facts.agentId,
      model: facts.route?.answered || facts.model,
      runnerId: deps.runnerId,
      durationMs: Math.round(performance.now() - started),
      outcome: result,
    };
    // runId and runnerId are on the logger already (its child bindings): a line names each once.
    const { runId: _runId, runnerId: _runnerId, ...fields } = summary;
    log.info(fields, "run finished");
    deps.observer?.finished(summary);
    span?.set("gen_ai.agent.id", summary.agentId).set("gen_ai.request.model", summary.model).set("gw.outcome", result).end(result);
  };
  let outcome: { result: ExecutedRun } | { err: unknown };
  try {
    outcome = { result: await execute(deps, req, events, controller.signal, confirmed, lock, facts) };
  } catch (err) {
    outcome = { err };
  }
  try {
    const claim = await confirmed;
    if (claim === null) {
      events.drop();
      return;
    }
    const { record } = claim;
    if ("result" in outcome) {
      await announce(deps, events, record, { ...finalOutcome(outcome.result), ...routeData(facts) }, { phase: "end", ...routeData(facts) }, log);
      summarize("ok");
      return;
    }
    // A run that failed before it had a model (an unknown agent, an abort while it waited for
    // its session) still starts before it ends.
    startLifecycle(events, facts, { agentId: facts.agentId });
    const failure = runFailure(outcome.err, controller.signal);
    if (failure.code === "INTERNAL") log.error({ err: outcome.err }, "run failed");
    else log.info({ code: failure.code, reason: failure.message }, "run ended with an error");
    // The request id names the log lines above: edges show clients other than control the
    // catalogue's message and this id instead of the failure's words (DESIGN §10).
    const requestId = currentRequestId();
    const data = {
      phase: "error",
      error: failure.message,
      code: failure.code,
      ...(requestId === undefined ? {} : { requestId }),
      ...(failure.code === "ABORTED" ? { aborted: true } : {}),
      ...routeData(facts),
    };
    await announce(deps, events, record, { error: failure, ...routeData(facts) }, data, log);
    summarize(failure.code);
  } finally {
    clearTimeout(timer);
    clearInterval(beat);
    deps.active.delete(req.runId);
    // A run that was not ours (claimed elsewhere, already finished) ends its span unmarked.
    span?.set("gw.outcome", "not_ours").end();
    if (lock.held) await deps.locks.release(req.sessionKey, req.runId).catch(() => undefined);
  }
}
