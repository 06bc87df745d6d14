import { randomUUID } from "node:crypto";
import { type Bus, callRpc, type Subjects } from "@gw/bus";
import { BUILTIN_PROVIDER, type GatewayConfig, parseModelRef } from "@gw/config";
import { GatewayError, type HookAccepted, isGatewayError, type HookWakeMode, RPC, type RunRequest, sessionKeyProblem } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { Heartbeat } from "./heartbeat/heartbeat.js";
import type { DeferredRuns } from "./queues/deferred-runs.js";
import type { WakeQueue } from "./queues/wake-queue.js";
import type { RunDispatcher } from "./run-dispatch.js";

/** An agent hook after validation, from POST /hooks/agent or an agent mapping. */
export interface AgentHook {
  message: string;
  agentId?: string | undefined;
  /** Absent: a fresh `hook:<uuid>` session for this call. */
  sessionKey?: string | undefined;
  name: string;
  deliver: boolean;
  channel?: string | undefined;
  to?: string | undefined;
  model?: string | undefined;
  thinking?: string | undefined;
  wakeMode: HookWakeMode;
  timeoutSeconds?: number | undefined;
}

export interface HookActionsDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  requestTimeoutMs: number;
  dispatcher: RunDispatcher;
  wake: WakeQueue;
  deferred: DeferredRuns;
  heartbeat: Heartbeat;
  logger: Logger;
}

/** What a hook does once accepted: queue a wake text, start or defer an agent run. */
export class HookActions {
  private readonly agents: Set<string>;
  private readonly providers: Set<string>;

  constructor(private readonly deps: HookActionsDeps) {
    this.agents = new Set(deps.config.agents.list.map((agent) => agent.id));
    this.providers = new Set([BUILTIN_PROVIDER, ...Object.keys(deps.config.models.providers)]);
  }

  /**
   * Queues the text durably; "now" then runs a heartbeat turn at once and answers its runId.
   * A turn that cannot start now (no run queue) is not the caller's failure: the text is queued,
   * and the next heartbeat takes it.
   */
  async wake(text: string, mode: HookWakeMode, source: string): Promise<HookAccepted> {
    const key = await this.deps.wake.add(text, source);
    let runId = "";
    if (mode === "now") {
      runId = await this.deps.heartbeat.wakeNow(key).catch((err: unknown) => {
        this.deps.logger.warn({ err, source }, "the woken turn cannot start now; its text waits for the next heartbeat");
        return "";
      });
    }
    return { action: "wake", runId, sessionKey: this.deps.config.hooks.mainSessionKey, wakeMode: mode, duplicate: false };
  }

  /**
   * Checks what can be checked before anything runs (agent, model, session key, and with
   * `deliver` the destination, asked of the delivery service), then starts the run ("now") or
   * stores it for the next heartbeat. Answers once the run is durably queued or stored.
   */
  async agent(hook: AgentHook): Promise<HookAccepted> {
    this.check(hook);
    const sessionKey = hook.sessionKey ?? `hook:${randomUUID()}`;
    const request = this.deps.dispatcher.plan({
      sessionKey,
      agentId: hook.agentId,
      message: hook.message,
      sender: hook.name,
      deliver: hook.deliver,
      channel: hook.channel,
      to: hook.to,
      model: hook.model,
      thinking: hook.thinking,
      timeoutSeconds: hook.timeoutSeconds,
    });
    if (hook.deliver) await this.checkDestination(request);
    if (hook.wakeMode === "now") await this.deps.dispatcher.dispatch(request, { endOnFailure: true });
    else await this.deps.deferred.add(request);
    return { action: "agent", runId: request.runId, sessionKey, wakeMode: hook.wakeMode, duplicate: false };
  }

  private check(hook: AgentHook): void {
    if (hook.agentId !== undefined && !this.agents.has(hook.agentId)) {
      throw new GatewayError("INVALID_REQUEST", `agentId: unknown agent "${hook.agentId}"`);
    }
    if (hook.model !== undefined) {
      let provider: string;
      try {
        provider = parseModelRef(hook.model).provider;
      } catch (err) {
        throw new GatewayError("INVALID_REQUEST", `model: ${(err as Error).message}`);
      }
      if (!this.providers.has(provider)) throw new GatewayError("INVALID_REQUEST", `model: unknown provider "${provider}"`);
    }
    if (hook.sessionKey !== undefined) {
      const problem = sessionKeyProblem(hook.sessionKey);
      if (problem !== undefined) throw new GatewayError("INVALID_REQUEST", `sessionKey: ${problem}`);
    }
  }

  /**
   * The answer of a hook run reaches nobody who could be told it went nowhere, so a destination
   * that cannot work is refused now, with delivery's own reason (unknown channel, bad recipient,
   * no recipient at all).
   */
  async checkDestination(request: RunRequest): Promise<void> {
    try {
      await this.askDelivery(request);
    } catch (err) {
      if (!isGatewayError(err) || (err.code !== "INVALID_REQUEST" && err.code !== "CHANNEL_NOT_FOUND")) throw err;
      throw new GatewayError(err.code, `deliver: ${err.message} (or send deliver: false)`, { cause: err });
    }
  }

  private async askDelivery(request: RunRequest): Promise<void> {
    await callRpc(
      this.deps.bus,
      this.deps.subjects,
      RPC.deliveryEnqueue,
      {
        message: {
          channel: request.messageChannel,
          to: request.to ?? "",
          text: "check",
          mediaUrls: [],
          gifPlayback: false,
          sessionKey: request.sessionKey,
          idempotencyKey: `run:${request.runId}`,
        },
        origin: `hook:${request.runId}`,
        validateOnly: true,
      },
      { timeoutMs: this.deps.requestTimeoutMs },
    );
  }
}
