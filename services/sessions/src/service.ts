import { randomUUID } from "node:crypto";
import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import { GatewayError, RPC, type SessionsPreviewRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import {
  compactSession,
  deleteSession,
  listSessions,
  patchSession,
  previewSession,
  resetSession,
} from "./admin-ops.js";
import { AgentCatalog } from "./agents.js";
import type { SessionsDeps, Summarizer } from "./deps.js";
import { EncodedPreviews } from "./encoded-previews.js";
import type { SessionRepository } from "./repository.js";
import { SessionEvents } from "./session-events.js";
import { appendEntries, readHistory } from "./session-ops.js";
import { createSummarizer } from "./summarizer.js";

export interface SessionsServiceDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  repo: SessionRepository;
  logger: Logger;
  /** Tests pin these; production uses the clock, random UUIDs and the runner-backed summarizer. */
  now?: () => number;
  newId?: () => string;
  summarize?: Summarizer;
}

function decodePreviewRequest(data: Uint8Array): SessionsPreviewRequest {
  try {
    return RPC.sessionsPreview.request.decode(data);
  } catch (cause) {
    throw new GatewayError("INVALID_REQUEST", "malformed preview request", { cause });
  }
}

/**
 * `serveRpc` for `sessions.preview`, except that the handler hands back bytes: an unchanged
 * session's answer is not encoded again on every request.
 */
function servePreviews(d: SessionsServiceDeps, deps: SessionsDeps): Unsubscribe {
  const def = RPC.sessionsPreview;
  const encoded = new EncodedPreviews();
  return d.bus.handle(
    d.subjects.rpc(def.service, def.method),
    async (data) => previewSession(deps, decodePreviewRequest(data), encoded),
    { queue: def.service },
  );
}

export interface SessionsService {
  stop(): void;
}

/** Serves every sessions RPC on `<prefix>.rpc.sessions.<method>` in the `sessions` queue group. */
export function startSessionsService(d: SessionsServiceDeps): SessionsService {
  const deps: SessionsDeps = {
    repo: d.repo,
    events: new SessionEvents(d),
    agents: new AgentCatalog(d.config.agents),
    summarize: d.summarize ?? createSummarizer({ ...d, timeoutMs: d.config.gateway.limits.requestTimeoutMs / 2 }),
    now: d.now ?? Date.now,
    newId: d.newId ?? randomUUID,
  };
  const { bus, subjects } = d;
  const stops: Unsubscribe[] = [
    serveRpc(bus, subjects, RPC.sessionsAppend, (req) => appendEntries(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsHistory, (req) => readHistory(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsList, (req) => listSessions(deps, req)),
    servePreviews(d, deps),
    serveRpc(bus, subjects, RPC.sessionsPatch, (req) => patchSession(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsReset, (req) => resetSession(deps, req.key)),
    serveRpc(bus, subjects, RPC.sessionsDelete, (req) => deleteSession(deps, req.key)),
    serveRpc(bus, subjects, RPC.sessionsCompact, (req) => compactSession(deps, req.key)),
  ];
  return {
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}
