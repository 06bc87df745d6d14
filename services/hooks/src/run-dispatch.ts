import { randomUUID } from "node:crypto";
import type { Bus, Subjects } from "@gw/bus";
import { GatewayError, isGatewayError, type RunRecord, type RunRequest } from "@gw/contracts";
import { publishRunEnd, type RunQueue, type RunRegistry } from "@gw/runs";

/** The name hook runs are started under (RunRequest.edgeId): their events go out on run.hooks.<runId>.events. */
export const HOOKS_ORIGIN = "hooks";

export interface RunDispatchDeps {
  bus: Bus;
  subjects: Subjects;
  queue: RunQueue;
  registry: RunRegistry;
}

/** What a hook asks to run; empty strings and 0 mean "the default". */
export interface RunPlan {
  sessionKey: string;
  agentId?: string;
  message: string;
  sender: string;
  deliver: boolean;
  channel?: string;
  to?: string;
  model?: string;
  thinking?: string;
  timeoutSeconds?: number;
  extraSystemPrompt?: string;
  /** Fixed by callers that must be able to dispatch the same run again (heartbeat turns). */
  runId?: string;
  nonce?: string;
}

/** A run is dispatched once: a dispatch that finds its own registration queued sends it again, else leaves it. */
export type DispatchOutcome = "dispatched" | "already";

/**
 * Starts hook runs the way the edge starts client runs: a record in the run registry (Redis or
 * memory) and the request on the run queue (a JetStream work queue, whose publish ack means the
 * request is stored, or the in-process queue). Hooks answer as soon as both are done, so
 * "accepted" means "durably queued"; nobody follows the run's events here.
 *
 * Dispatching is safe to repeat with the same request (same runId and nonce), which is how a
 * heartbeat or a deferred run survives a crash between "registered" and "queued": the repeat
 * finds its own record still queued and queues it again (JetStream drops the duplicate within
 * its 2-minute window; after that the runner's claim lets only one through), or finds it
 * running or over and does nothing.
 */
export class RunDispatcher {
  constructor(private readonly deps: RunDispatchDeps) {}

  plan(plan: RunPlan): RunRequest {
    return {
      runId: plan.runId ?? randomUUID(),
      sessionKey: plan.sessionKey,
      agentId: plan.agentId ?? "",
      message: plan.message,
      model: plan.model ?? "",
      thinking: plan.thinking ?? "",
      extraSystemPrompt: plan.extraSystemPrompt ?? "",
      timeoutSeconds: plan.timeoutSeconds ?? 0,
      deliver: plan.deliver,
      messageChannel: plan.channel ?? "",
      to: plan.to ?? "",
      sender: plan.sender,
      edgeId: HOOKS_ORIGIN,
      acceptedAt: Date.now(),
      ephemeral: false,
      history: [],
      nonce: plan.nonce ?? randomUUID(),
      // Hooks carry a message, never an OpenAI client's tools or tool turns.
      clientTools: [],
      toolChoice: undefined,
      sampling: undefined,
      toolCallTurn: undefined,
      toolResults: [],
    };
  }

  /**
   * Registers and queues the run. With `endOnFailure` a run that cannot be queued is recorded
   * as failed (UNAVAILABLE) for anyone waiting on it, and the error is thrown; without it the
   * record stays queued so the same request can be dispatched again later.
   */
  async dispatch(request: RunRequest, opts: { endOnFailure: boolean }): Promise<DispatchOutcome> {
    const now = Date.now();
    const record: RunRecord = {
      runId: request.runId,
      nonce: request.nonce,
      sessionKey: request.sessionKey,
      agentId: request.agentId,
      state: "queued",
      edgeId: HOOKS_ORIGIN,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await this.register(record))) return "already";
    try {
      await this.deps.queue.submit(request);
    } catch (err) {
      if (opts.endOnFailure) await this.end(record, "the run could not be queued for a runner").catch(() => undefined);
      throw err;
    }
    return "dispatched";
  }

  /** True when the record is ours and still queued (new, or a repeat of an earlier dispatch). */
  private async register(record: RunRecord): Promise<boolean> {
    try {
      await this.deps.registry.create(record);
      return true;
    } catch (err) {
      if (!isGatewayError(err) || err.code !== "CONFLICT") throw err;
    }
    const existing = await this.deps.registry.get(record.runId);
    if (existing === null || existing.nonce !== record.nonce) {
      throw new GatewayError("CONFLICT", `runId ${record.runId} belongs to another run`);
    }
    return existing.state === "queued";
  }

  /** As the edge ends a run no runner will take: the error recorded, and the lifecycle event anyone following hears. */
  private async end(record: RunRecord, message: string): Promise<void> {
    const error = { code: "UNAVAILABLE" as const, message };
    const final = await this.deps.registry.finish(record, { error });
    publishRunEnd(this.deps.bus, this.deps.subjects, final, error.code, message);
  }
}
