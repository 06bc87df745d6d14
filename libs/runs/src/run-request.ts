import { randomUUID } from "node:crypto";
import { isGatewayError, type RunRecord, type RunRequest } from "@gw/contracts";
import type { RunRegistry } from "./run-registry.js";

type Given = "sessionKey" | "message" | "edgeId";

/**
 * What starting a run names: its session, its message and who starts it (an edge, a delivery
 * replica, the hooks service); everything else has a default (below).
 */
export type RunRequestFields = Pick<RunRequest, Given> & { [K in Exclude<keyof RunRequest, Given>]?: RunRequest[K] | undefined };

/**
 * The one RunRequest literal: every field the fields leave out is "the default" (an empty
 * string, 0, false, nothing), a new runId and nonce unless given, accepted now. The request
 * carries whole seconds: a fraction rounds up, so the run never gets less than asked.
 */
export function runRequest(fields: RunRequestFields): RunRequest {
  return {
    runId: fields.runId ?? randomUUID(),
    sessionKey: fields.sessionKey,
    agentId: fields.agentId ?? "",
    message: fields.message,
    model: fields.model ?? "",
    thinking: fields.thinking ?? "",
    extraSystemPrompt: fields.extraSystemPrompt ?? "",
    timeoutSeconds: Math.ceil(fields.timeoutSeconds ?? 0),
    deliver: fields.deliver ?? false,
    messageChannel: fields.messageChannel ?? "",
    to: fields.to ?? "",
    sender: fields.sender ?? "",
    edgeId: fields.edgeId,
    acceptedAt: fields.acceptedAt ?? Date.now(),
    ephemeral: fields.ephemeral ?? false,
    history: fields.history ?? [],
    nonce: fields.nonce ?? randomUUID(),
    // What only OpenAI-compatible requests carry: client tools, sampling, a tool-call turn.
    clientTools: fields.clientTools ?? [],
    toolChoice: fields.toolChoice,
    sampling: fields.sampling,
    toolCallTurn: fields.toolCallTurn,
    toolResults: fields.toolResults ?? [],
    attachments: fields.attachments ?? [],
  };
}

/** The registry record of a request just made: queued, under the request's nonce, created `at`. */
export function queuedRecord(request: RunRequest, at: number = request.acceptedAt): RunRecord {
  return {
    runId: request.runId,
    nonce: request.nonce,
    sessionKey: request.sessionKey,
    agentId: request.agentId,
    state: "queued",
    edgeId: request.edgeId,
    createdAt: at,
    updatedAt: at,
  };
}

/** A registration: ours, or the runId was taken and this is the record there (null: gone meanwhile). */
export type Registration = { registered: true } | { registered: false; existing: RunRecord | null };

/**
 * Registers a run that may have been registered before under the same runId (a replay after a
 * crash, a repeated dispatch): the record already there is the caller's to judge.
 */
export async function registerRun(registry: RunRegistry, record: RunRecord): Promise<Registration> {
  try {
    await registry.create(record);
    return { registered: true };
  } catch (err) {
    if (!isGatewayError(err) || err.code !== "CONFLICT") throw err;
  }
  return { registered: false, existing: await registry.get(record.runId) };
}
