import type { GatewayConfig } from "@gw/config";
import type { Logger } from "@gw/runtime";
import type { RunEventLog, RunRegistry } from "@gw/runs";
import type { BusDeps } from "../bus-deps.js";
import type { DeviceServices } from "../devices/device-services.js";
import { AgentSubscriptions } from "../events/agent-subscriptions.js";
import type { EventHub } from "../events/event-hub.js";
import type { RunEventRouter } from "../events/run-event-router.js";
import { textOnlyModels } from "../runs/image-input.js";
import type { RunClient } from "../runs/run-client.js";
import type { EdgePresence } from "../status/edge-presence.js";
import { agentRunMethods } from "./agent-runs.js";
import { agentSubscribeMethods } from "./agent-subscribe.js";
import { agentMethods } from "./agents.js";
import { channelPairingMethods } from "./channel-pairing.js";
import { cronMethods } from "./cron.js";
import { deliveryMethods } from "./delivery.js";
import { deviceMethods } from "./devices.js";
import { operatorMethods } from "./operator.js";
import { pairingMethods } from "./pairing.js";
import { MethodRegistry } from "./registry.js";
import { sessionMethods } from "./sessions.js";
import { toolMethods } from "./tools.js";

export interface EdgeMethodDeps {
  config: GatewayConfig;
  bus: BusDeps;
  logger: Logger;
  edgeId: string;
  runs: RunClient;
  /** The shared run registry and the runs' kept events (agent.subscribe, gateway.status). */
  runStore: { registry: RunRegistry; events: RunEventLog };
  events: EventHub;
  runEvents: RunEventRouter;
  devices: DeviceServices;
  presence: EdgePresence;
  /** How long the edge waits for delivery's answer to a send. */
  sendTimeoutMs: number;
}

/** Every WS method of the edge (SPEC §3), in one registry. */
export function edgeMethods(deps: EdgeMethodDeps): MethodRegistry {
  const { config, bus, logger, devices } = deps;
  const subscriptions = new AgentSubscriptions({
    router: deps.runEvents,
    hub: deps.events,
    registry: deps.runStore.registry,
    log: deps.runStore.events,
    logger,
    maxPerConnection: config.gateway.limits.maxSubscriptionsPerConnection,
  });
  return new MethodRegistry().register(
    ...agentMethods(bus),
    ...agentRunMethods(deps.runs, logger, textOnlyModels(config)),
    ...agentSubscribeMethods(subscriptions),
    ...sessionMethods(bus),
    ...deliveryMethods({ ...bus, sendTimeoutMs: deps.sendTimeoutMs }),
    ...pairingMethods(devices),
    ...deviceMethods(devices),
    ...channelPairingMethods(bus),
    ...cronMethods(bus),
    ...toolMethods(bus),
    ...operatorMethods({ ...bus, registry: deps.runStore.registry, presence: deps.presence, edgeId: deps.edgeId, hooksEnabled: config.hooks.enabled }),
  );
}
