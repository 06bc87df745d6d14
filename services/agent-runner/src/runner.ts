import { randomUUID } from "node:crypto";
import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import { collectSecrets, type GatewayConfig } from "@gw/config";
import { RPC, RunAbort } from "@gw/contracts";
import type { RetryPolicy } from "@gw/http-client";
import type { Logger, Metrics } from "@gw/runtime";
import type { RunQueue, RunRegistry } from "@gw/runs";
import type { FastStore } from "@gw/store";
import { AgentDirectory } from "./agent-directory.js";
import { modelMetrics } from "./providers/metered-provider.js";
import { routeMetrics } from "./providers/route-metrics.js";
import { ProviderRegistry } from "./providers/provider-registry.js";
import { RunAborted } from "./run/run-errors.js";
import { AnswerDelivery } from "./run/answer-delivery.js";
import { executeRun } from "./run/run-executor.js";
import { runMetrics } from "./run/run-metrics.js";
import { SessionClient } from "./run/session-client.js";
import { SessionLocks } from "./run/session-lock.js";
import { serveModelsStatus } from "./providers/models-status-rpc.js";
import { serveAgentSummarize } from "./summarize/agent-summarize-rpc.js";
import { builtinTools } from "./tools/builtin-tools.js";
import { McpServers } from "./tools/mcp/mcp-servers.js";
import { ToolRegistry } from "./tools/tool-registry.js";
import { serveToolsInvoke } from "./tools/tools-invoke-rpc.js";
import { serveToolsStatus } from "./tools/tools-status-rpc.js";

export interface RunnerDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  queue: RunQueue;
  registry: RunRegistry;
  logger: Logger;
  runnerId?: string;
  /** Provider retry policy; tests shorten the backoff. */
  retry?: RetryPolicy;
  /** Run and model-call metrics; none without. */
  metrics?: Metrics;
  /** Where model cooldowns live, shared by every runner; a private memory store without. */
  fastStore?: FastStore;
}

export interface Runner {
  readonly runnerId: string;
  activeRuns(): number;
  /** Takes no new runs and waits for the ones in hand. */
  stop(): Promise<void>;
}

/** The agent-runner's bus face: the agent directory, runs from the queue, aborts, tools, summaries. */
export function startRunner(deps: RunnerDeps): Runner {
  const { bus, subjects, config } = deps;
  const runnerId = deps.runnerId ?? randomUUID().slice(0, 8);
  const directory = new AgentDirectory(config.agents);
  const timeoutMs = config.gateway.limits.requestTimeoutMs;
  const logger = deps.logger.child({ runnerId });
  const mcp = new McpServers(config.runner.tools.mcp, { logger });
  mcp.start();
  const tools = new ToolRegistry(
    [
      ...builtinTools({
        config: config.runner.tools,
        sessions: { bus, subjects, timeoutMs },
        delivery: { bus, subjects, timeoutMs: config.delivery.sendTimeoutMs + 1_000 },
      }),
      mcp,
    ],
    { maxResultBytes: config.runner.maxToolResultBytes },
  );
  const providers = new ProviderRegistry(config.models, {
    retry: deps.retry,
    secrets: collectSecrets(config),
    ...(deps.metrics ? { metrics: modelMetrics(deps.metrics), routeMetrics: routeMetrics(deps.metrics) } : {}),
    ...(deps.fastStore ? { fastStore: deps.fastStore } : {}),
    onStoreError: (err) => deps.logger.warn({ err }, "model cooldowns unavailable"),
  });
  const active = new Map<string, AbortController>();
  // `consumer` is set below, in this same synchronous call: no scrape runs before it.
  const observer = deps.metrics
    ? runMetrics(deps.metrics, { active: () => active.size, admitted: () => consumer.admitted(), queue: deps.queue })
    : undefined;
  const executor = {
    runnerId,
    settings: config.runner,
    bus,
    subjects,
    registry: deps.registry,
    directory,
    providers,
    tools,
    sessions: new SessionClient({ bus, subjects, timeoutMs, historyLimit: config.runner.historyLimit }),
    delivery: new AnswerDelivery({ bus, subjects, timeoutMs }),
    locks: new SessionLocks({ bus, subjects, registry: deps.registry }),
    logger,
    active,
    ...(observer ? { observer } : {}),
  };
  const stops: Unsubscribe[] = [
    serveRpc(bus, subjects, RPC.agentsList, () => ({ agents: directory.list(), defaultAgentId: directory.defaultId })),
    // The directory's "" is the default agent: absent, and the "" of an older edge, both name it.
    serveRpc(bus, subjects, RPC.agentIdentityGet, (req) => directory.identity(req.agentId ?? "")),
    serveToolsInvoke({ bus, subjects, tools, timeoutMs }),
    serveToolsStatus({ bus, subjects, runnerId, tools, mcp }),
    serveAgentSummarize({ bus, subjects, directory, providers, logger }),
    serveModelsStatus({ bus, subjects, providers, models: config.models }),
    bus.subscribe(subjects.broadcast("run.abort"), (data) => {
      const { runId } = RunAbort.decode(data);
      active.get(runId)?.abort(new RunAborted());
    }),
  ];
  const consumer = deps.queue.consume(
    (request, taken) =>
      executeRun(executor, request, taken).catch((err: unknown) => logger.error({ err, runId: request.runId }, "run could not start")),
    { maxConcurrent: config.runner.maxConcurrentRuns, maxLagMs: config.runner.admissionLagMs },
  );
  return {
    runnerId,
    activeRuns: () => consumer.active(),
    stop: async () => {
      for (const stop of stops) stop();
      await consumer.stop();
      // After the runs: a run finishing its tool calls still has its servers.
      await mcp.stop();
    },
  };
}
