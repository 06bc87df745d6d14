import type { Bus, Subjects } from "@gw/bus";
import { GatewayError, type RunRecord, type RunRequest } from "@gw/contracts";
import { endRun, queuedRecord, registerRun, type RunQueue, type RunRegistry, runRequest } from "@gw/runs";

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

  /** Hooks carry a message, never an OpenAI client's tools or tool turns. */
  plan(plan: RunPlan): RunRequest {
    return runRequest({
      runId: plan.runId,
      sessionKey: plan.sessionKey,
      agentId: plan.agentId,
      message: plan.message,
      model: plan.model,
      thinking: plan.thinking,
      extraSystemPrompt: plan.extraSystemPrompt,
      timeoutSeconds: plan.timeoutSeconds,
      deliver: plan.deliver,
      messageChannel: plan.channel,
      to: plan.to,
      sender: plan.sender,
      edgeId: HOOKS_ORIGIN,
      nonce: plan.nonce,
    });
  }

  /**
   * Registers and queues the run. With `endOnFailure` a run that cannot be queued is recorded
   * as failed (UNAVAILABLE) for anyone waiting on it, and the error is thrown; without it the
   * record stays queued so the same request can be dispatched again later.
   */
  async dispatch(request: RunRequest, opts: { endOnFailure: boolean }): Promise<DispatchOutcome> {
    const record = queuedRecord(request, Date.now());
    if (!(await this.register(record))) return "already";
    try {
      await this.deps.queue.submit(request);
    } catch (err) {
      // As the edge ends a run no runner will take: the error recorded, and the lifecycle event anyone following hears.
      if (opts.endOnFailure) await endRun(this.deps, record, "UNAVAILABLE", "the run could not be queued for a runner").catch(() => undefined);
      throw err;
    }
    return "dispatched";
  }

  /** True when the record is ours and still queued (new, or a repeat of an earlier dispatch). */
  private async register(record: RunRecord): Promise<boolean> {
    const registration = await registerRun(this.deps.registry, record);
    if (registration.registered) return true;
    const existing = registration.existing;
    if (existing === null || existing.nonce !== record.nonce) {
      throw new GatewayError("CONFLICT", `runId ${record.runId} belongs to another run`);
    }
    return existing.state === "queued";
  }
}
