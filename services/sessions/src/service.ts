import { randomUUID } from "node:crypto";
import { type Bus, type RpcDefinition, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import { RPC } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { compactSession } from "./ops/compaction.js";
import { AgentCatalog } from "./agents.js";
import type { SessionsDeps, Summarizer } from "./ops/deps.js";
import { EncodedPreviews } from "./ops/encoded-previews.js";
import { type KeyedHandler, PartitionRouter } from "./partitions/partition-routing.js";
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
  /**
   * Distributed mode: sessions.partitions. Each replica then owns some partitions and serves
   * the requests about their sessions (partition-routing.ts); without it every replica serves
   * every request (embedded mode: one process).
   */
  partitions?: number;
}

export interface SessionsService {
  stop(): void;
}

/**
 * Serves every sessions RPC on `<prefix>.rpc.sessions.<method>` in the `sessions` queue group;
 * with `partitions`, requests about one session go on to its partition's owner.
 */
export function startSessionsService(d: SessionsServiceDeps): SessionsService {
  const deps: SessionsDeps = {
    repo: d.repo,
    events: new SessionEvents(d),
    agents: new AgentCatalog(d.config.agents, d.config.models.providers),
    summarize: d.summarize ?? createSummarizer({ ...d, timeoutMs: d.config.gateway.limits.requestTimeoutMs / 2 }),
    previews: new EncodedPreviews(),
    now: d.now ?? Date.now,
    newId: d.newId ?? randomUUID,
  };
  const { bus, subjects } = d;
  const router =
    d.partitions === undefined
      ? undefined
      : new PartitionRouter({ bus, subjects, partitions: d.partitions, onOwned: (owned) => d.repo.own?.(owned) });
  /** A request about one session: served here, or by its partition's owner when there are partitions. */
  const keyed = <Req extends { key: string }, Res>(def: RpcDefinition<Req, Res>, handle: KeyedHandler<Req, Res>) =>
    router ? router.keyed(def, handle).serve() : serveRpc(bus, subjects, def, handle);
  const stops: Unsubscribe[] = [
    keyed(RPC.sessionsAppend, (req) => appendEntries(deps, req)),
    keyed(RPC.sessionsHistory, (req) => readHistory(deps, req)),
    serveRpc(bus, subjects, RPC.sessionsList, (req) => listSessions(deps, req)),
    keyed(RPC.sessionsPreview, (req) => previewSession(deps, req)),
    keyed(RPC.sessionsPatch, (req) => patchSession(deps, req)),
    keyed(RPC.sessionsReset, (req) => resetSession(deps, req.key)),
    keyed(RPC.sessionsDelete, (req) => deleteSession(deps, req.key)),
    keyed(RPC.sessionsCompact, (req, ctx) => compactSession(deps, req.key, ctx.deadline)),
  ];
  router?.start();
  return {
    stop: () => {
      router?.stop();
      for (const stop of stops) stop();
    },
  };
}
