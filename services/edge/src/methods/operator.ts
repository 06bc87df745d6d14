import { callRpc } from "@gw/bus";
import {
  GATEWAY_VERSION,
  GatewayError,
  GatewayStatusParamsSchema,
  ModelsStatusParamsSchema,
  ModelsStatusResultSchema,
  RPC,
  type RunInFlight,
  RunsListParamsSchema,
} from "@gw/contracts";
import type { LiveRun, RunRegistry } from "@gw/runs";
import type { BusDeps } from "../bus-deps.js";
import type { EdgePresence } from "../status/edge-presence.js";
import { channelsSummary, probeServices } from "../status/service-probes.js";
import { defineMethod } from "./registry.js";

export interface OperatorMethodDeps extends BusDeps {
  registry: RunRegistry;
  presence: EdgePresence;
  edgeId: string;
  hooksEnabled: boolean;
}

/** How many runs `gateway.status` reads to count them; beyond it says "at least". */
const STATUS_RUNS_LIMIT = 1_000;

/**
 * `stalled`: running, but its runner stopped heartbeating (it died; the run ends once noticed).
 * The live list holds no ended run, so a run not queued is running.
 */
function runView({ record, heartbeat }: LiveRun): RunInFlight {
  return {
    runId: record.runId,
    sessionKey: record.sessionKey,
    agentId: record.agentId,
    status: record.state === "queued" ? "queued" : heartbeat ? "running" : "stalled",
    startedAt: record.createdAt,
    updatedAt: record.updatedAt,
    edgeId: record.edgeId,
    runner: record.owner ?? null,
  };
}

const state = (coolingMs: number) => (coolingMs > 0 ? "cooling" : "ready");

/**
 * What an operator's tools need to see the whole deployment at once (control connections only,
 * auth/permissions.ts): the runs in flight on every edge and runner, and a status of edges,
 * services, channels and runs, and the model providers' and keys' cooldowns.
 */
export function operatorMethods(deps: OperatorMethodDeps) {
  return [
    defineMethod({
      name: "runs.list",
      params: RunsListParamsSchema,
      handler: async (params) => {
        // Filters apply before the limit, so a filtered page is full when there are enough.
        const runs = (await deps.registry.listLive(STATUS_RUNS_LIMIT))
          .filter(({ record: r }) => (params.sessionKey === undefined || r.sessionKey === params.sessionKey) && (params.agentId === undefined || r.agentId === params.agentId))
          .slice(0, params.limit);
        return { runs: runs.map(runView) };
      },
    }),
    defineMethod({
      name: "gateway.status",
      params: GatewayStatusParamsSchema,
      handler: async () => {
        const [edges, probed, runs] = await Promise.all([deps.presence.list(), probeServices(deps), deps.registry.listLive(STATUS_RUNS_LIMIT)]);
        return {
          version: GATEWAY_VERSION,
          edgeId: deps.edgeId,
          edges,
          services: probed.services,
          hooks: { enabled: deps.hooksEnabled },
          channels: channelsSummary(probed.channels),
          runs: {
            inFlight: runs.length,
            atLeast: runs.length >= STATUS_RUNS_LIMIT,
            queued: runs.filter((r) => r.record.state === "queued").length,
            running: runs.filter((r) => r.record.state === "running" && r.heartbeat).length,
            stalled: runs.filter((r) => r.record.state === "running" && !r.heartbeat).length,
          },
        };
      },
    }),
    defineMethod({
      name: "models.status",
      params: ModelsStatusParamsSchema,
      handler: async () => {
        // Any runner answers: the cooldowns are in the FastStore every runner shares.
        const res = await callRpc(deps.bus, deps.subjects, RPC.modelsStatus, {}, { timeoutMs: deps.requestTimeoutMs });
        // The reply's kind is a proto string: the answer's schema says which kinds there are.
        const answer = ModelsStatusResultSchema.safeParse({
          providers: res.providers.map((p) => ({
            name: p.name,
            kind: p.kind,
            state: state(p.coolingMs),
            coolingMs: p.coolingMs,
            failures: p.failures,
            keys: p.keys.map((k) => ({ id: k.id, state: state(k.coolingMs), coolingMs: k.coolingMs, rateLimits: k.rateLimits })),
          })),
        });
        if (!answer.success) throw new GatewayError("INTERNAL", "malformed models status from a runner", { cause: answer.error });
        return answer.data;
      },
    }),
  ];
}
