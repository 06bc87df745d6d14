import { randomUUID } from "node:crypto";
import { type Bus, serveRpc, type Subjects, type Unsubscribe } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import {
  GatewayError,
  type HookAccepted,
  type HookAgentRequest,
  type HookMappingRequest,
  type HookWakeMode,
  HOOK_WAKE_MODES,
  RPC,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { RunQueue, RunRegistry } from "@gw/runs";
import type { DurableStore, FastStore } from "@gw/store";
import { HookActions } from "./actions.js";
import { startCron } from "./cron/start-cron.js";
import { DeliveryOnce } from "./delivery-once.js";
import { Heartbeat } from "./heartbeat/heartbeat.js";
import { TurnSlot } from "./heartbeat/turn-slot.js";
import { deliveryIdOf, MappingTable, renderMapping } from "./mappings/mapping-table.js";
import { DeferredRuns } from "./queues/deferred-runs.js";
import { WakeQueue } from "./queues/wake-queue.js";
import { RunDispatcher } from "./run-dispatch.js";

export interface HooksServiceDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  /** Wake texts, deferred runs and the turn slot: JetStream KV, or files in embedded mode. */
  durable: DurableStore;
  /** Where hook runs go, exactly as the edge's: the run queue and the run registry. */
  runs: { queue: RunQueue; registry: RunRegistry };
  logger: Logger;
  /** Names this replica as the holder of a heartbeat turn (default: random). */
  replicaId?: string;
}

export interface HooksService {
  heartbeat: Heartbeat;
  wake: WakeQueue;
  stop(): Promise<void>;
}

/** How long a dead replica's claim on a delivery id blocks it, and how long a repeat waits for the first. */
const CLAIM_TTL_MS = 15_000;
const REPEAT_WAIT_MS = 5_000;

function wakeMode(value: string, field: string): HookWakeMode {
  if ((HOOK_WAKE_MODES as readonly string[]).includes(value)) return value as HookWakeMode;
  throw new GatewayError("INVALID_REQUEST", `${field} must be "now" or "next-heartbeat"`);
}


/**
 * The hooks service (DESIGN §9): `<prefix>.rpc.hooks.{wake,agent,mapping}` in the `hooks`
 * queue group, behind the edge's /hooks/* plugin, and the heartbeat. Written once against the
 * ports; main.ts (NATS, Redis, JetStream) and the embedded gateway (in process, memory, files)
 * run it.
 */
export async function startHooksService(deps: HooksServiceDeps): Promise<HooksService> {
  const { config, logger } = deps;
  const settings = config.hooks;
  const dispatcher = new RunDispatcher({ bus: deps.bus, subjects: deps.subjects, ...deps.runs });
  const { wake, deferred, heartbeat } = await makeHeartbeat(deps, dispatcher);
  const actions = new HookActions({
    config,
    bus: deps.bus,
    subjects: deps.subjects,
    requestTimeoutMs: config.gateway.limits.requestTimeoutMs,
    dispatcher,
    wake,
    deferred,
    heartbeat,
    logger,
  });
  const served = serveHooks(deps, actions);
  await heartbeat.start();
  const cron = await startCron({ ...deps, registry: deps.runs.registry, dispatcher, actions });
  logger.info(
    {
      mainSessionKey: settings.mainSessionKey,
      heartbeatSeconds: settings.heartbeat.intervalSeconds,
      mappings: settings.mappings.map((m) => `${m.path}:${m.action.kind}`),
      cronJobs: config.cron.jobs.length,
    },
    "hooks serving",
  );
  return {
    heartbeat,
    wake,
    stop: async () => {
      for (const unsubscribe of served) unsubscribe();
      await cron.stop();
      await heartbeat.stop();
    },
  };
}

/** The heartbeat and the durable queues it reads: wake texts, deferred runs and the turn slot. */
async function makeHeartbeat(deps: HooksServiceDeps, dispatcher: RunDispatcher) {
  const settings = deps.config.hooks;
  const [wakeKv, deferredKv, slotKv] = await Promise.all([
    deps.durable.kv("hooks_wake"),
    deps.durable.kv("hooks_deferred"),
    deps.durable.kv("hooks_turn"),
  ]);
  const wake = new WakeQueue(wakeKv);
  const deferred = new DeferredRuns(deferredKv);
  const heartbeat = new Heartbeat({
    wake,
    deferred,
    slot: new TurnSlot(slotKv),
    dispatcher,
    store: deps.fastStore,
    replicaId: deps.replicaId ?? randomUUID(),
    logger: deps.logger,
    settings: {
      mainSessionKey: settings.mainSessionKey,
      intervalMs: settings.heartbeat.intervalSeconds * 1000,
      prompt: settings.heartbeat.prompt,
      channel: settings.heartbeat.channel,
      to: settings.heartbeat.to,
      maxEventsPerTurn: settings.heartbeat.maxEventsPerTurn,
    },
  });
  return { wake, deferred, heartbeat };
}

function agentHookOf(req: HookAgentRequest) {
  return {
    message: req.message,
    agentId: req.agentId,
    sessionKey: req.sessionKey,
    name: req.name ?? "Hook",
    deliver: req.deliver,
    channel: req.channel,
    to: req.to,
    model: req.model,
    thinking: req.thinking,
    wakeMode: wakeMode(req.wakeMode, "wakeMode"),
    timeoutSeconds: req.timeoutSeconds,
  };
}

/** The hook RPCs the edge forwards (wake, agent, mapped paths), each accepted once per delivery id. */
function serveHooks(deps: HooksServiceDeps, actions: HookActions): Unsubscribe[] {
  const settings = deps.config.hooks;
  const mappings = MappingTable.compile(settings.mappings);
  const once = new DeliveryOnce(deps.fastStore, {
    windowMs: settings.idempotencyWindowSeconds * 1000,
    claimTtlMs: CLAIM_TTL_MS,
    waitMs: REPEAT_WAIT_MS,
  });
  /** Runs `accept` once per delivery id; without an id, every request is a new delivery. */
  const oncePer = (scope: string, id: string | undefined, body: string, accept: () => Promise<HookAccepted>) =>
    id === undefined ? accept() : once.run(scope, id, body, accept);

  const mapping = async (req: HookMappingRequest): Promise<HookAccepted> => {
    const found = mappings.get(req.path);
    if (found === undefined) throw new GatewayError("NOT_FOUND", `no hook at ${settings.path}/${req.path}`);
    const payloadText = Buffer.from(req.payloadJson).toString("utf8");
    let payload: unknown;
    try {
      payload = payloadText === "" ? {} : JSON.parse(payloadText);
    } catch {
      throw new GatewayError("INVALID_REQUEST", "the request body is not JSON");
    }
    const ctx = { payload, headers: req.headers, query: req.query };
    const rendered = renderMapping(found, ctx);
    return oncePer(`mapping:${found.path}`, deliveryIdOf(found, ctx) ?? req.idempotencyKey, payloadText, () =>
      rendered.kind === "wake" ? actions.wake(rendered.text, rendered.wakeMode, `hooks/${found.path}`) : actions.agent(rendered.hook),
    );
  };

  return [
    serveRpc(deps.bus, deps.subjects, RPC.hooksWake, (req) => {
      const mode = wakeMode(req.mode, "mode");
      if (req.text === "") throw new GatewayError("INVALID_REQUEST", "text must not be empty");
      return oncePer("wake", req.idempotencyKey, JSON.stringify([req.text, mode]), () => actions.wake(req.text, mode, "wake"));
    }),
    serveRpc(deps.bus, deps.subjects, RPC.hooksAgent, (req) => {
      const hook = agentHookOf(req);
      if (hook.message === "") throw new GatewayError("INVALID_REQUEST", "message must not be empty");
      return oncePer("agent", req.idempotencyKey, JSON.stringify(hook), () => actions.agent(hook));
    }),
    serveRpc(deps.bus, deps.subjects, RPC.hooksMapping, mapping),
  ];
}
