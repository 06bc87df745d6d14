import { randomUUID } from "node:crypto";
import { given, isGatewayError, type RunRecord, RunRequest } from "@gw/contracts";
import type { RunRegistry } from "./run-registry.js";

type Given = "sessionKey" | "message" | "edgeId";

/**
 * What starting a run names: its session, its message and who starts it (an edge, a delivery
 * replica, the hooks service); everything else has a default (below).
 */
export type RunRequestFields = Pick<RunRequest, Given> & { [K in Exclude<keyof RunRequest, Given>]?: RunRequest[K] | undefined };

/** The request's optional text fields (proto3 `optional`): absent is "not given", the runner's default. */
const OPTIONAL_TEXT = ["agentId", "model", "thinking", "extraSystemPrompt", "messageChannel", "to", "sender"] as const satisfies ReadonlyArray<keyof RunRequest>;

/** `request` with every optional text field that is "" made absent. */
function withoutEmpty<T extends Partial<RunRequest>>(request: T): T {
  const out = { ...request };
  for (const key of OPTIONAL_TEXT) out[key] = given(request[key]);
  return out;
}

/**
 * A queued request (the run queue's, a hook's deferred run) as its reader takes it: a field
 * carried as "" reads as absent, so no reader past this point sees "" in an optional field.
 * (An older build's "" never reached the bytes, proto3 leaves it out, so its requests still
 * queued read as absent either way.)
 */
export function decodeRunRequest(bytes: Uint8Array): RunRequest {
  return withoutEmpty(RunRequest.decode(bytes));
}

/**
 * The one RunRequest literal: every field the fields leave out is "the default" (absent, or
 * 0, false, nothing), a new runId and nonce unless given, accepted now; an optional field
 * given as "" is left out too. The request carries whole seconds: a fraction rounds up, so the
 * run never gets less than asked.
 */
export function runRequest(fields: RunRequestFields): RunRequest {
  const text = withoutEmpty(fields);
  return {
    runId: fields.runId ?? randomUUID(),
    sessionKey: fields.sessionKey,
    agentId: text.agentId,
    message: fields.message,
    model: text.model,
    thinking: text.thinking,
    extraSystemPrompt: text.extraSystemPrompt,
    timeoutSeconds: Math.ceil(fields.timeoutSeconds ?? 0),
    deliver: fields.deliver ?? false,
    messageChannel: text.messageChannel,
    to: text.to,
    sender: text.sender,
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
    // The record's agent is "" for the default, as the runner reads it.
    agentId: request.agentId ?? "",
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
