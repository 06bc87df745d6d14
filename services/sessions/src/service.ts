import { randomUUID } from "node:crypto";
import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import { RPC } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { compactSession } from "./ops/compaction.js";
import { AgentCatalog } from "./agents.js";
import type { SessionsDeps, Summarizer } from "./deps.js";
import { EncodedPreviews } from "./ops/encoded-previews.js";
import type { SessionRepository } from "./repository.js";
import { SessionEvents } from "./session-events.js";
import { listSessions, previewSession, readHistory } from "./ops/reads.js";
import { appendEntries, deleteSession, patchSession, resetSession } from "./ops/writes.js";
import { createSummarizer } from "./ops/summarizer.js";

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
    previews: new EncodedPreviews(),
    now: d.now ?? Date.now,
    newId: d.newId ?? randomUUID,
  };
  const { bus, subjects } = d;
  const stops: Unsubscribe[] = [
    serveRpc(bus, subjects, RPC.sessionsAppend, (req) => appendEntries(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsHistory, (req) => readHistory(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsList, (req) => listSessions(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsPreview, (req) => previewSession(deps, req)),
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
