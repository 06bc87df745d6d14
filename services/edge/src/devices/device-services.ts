import type { Bus, Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { Logger } from "@gw/runtime";
import type { DurableStore, FastStore } from "@gw/store";
import { ControlEvents } from "../events/control-events.js";
import { DeviceLinks } from "./device-links.js";
import { DeviceRegistry } from "./device-registry.js";
import { PairingBook } from "./device-pairing-book.js";

/** What pairing and device methods, and the device-token step of the auth chain, work with. */
export interface DeviceServices {
  /** Paired devices and hashed tokens: the DurableStore, shared by every edge. */
  registry: DeviceRegistry;
  /** Pending pairing requests: the FastStore, with TTLs. */
  book: PairingBook;
  /** This edge's device sockets and pairing waiters, and the broadcasts between edges. */
  links: DeviceLinks;
  controlEvents: ControlEvents;
  edgeId: string;
  pairingEnabled: boolean;
  logger: Logger;
}

/** Opens the `devices` bucket and starts listening for device broadcasts and pairing results. */
export async function startDeviceServices(deps: {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  durable: DurableStore;
  edgeId: string;
  logger: Logger;
}): Promise<DeviceServices & { close(): void }> {
  const pairing = deps.config.gateway.pairing;
  const registry = new DeviceRegistry(await deps.durable.kv("devices"));
  const links = new DeviceLinks(deps);
  return {
    registry,
    book: new PairingBook(deps.fastStore, {
      ttlMs: pairing.pendingTtlSeconds * 1000,
      maxPerIp: pairing.maxPendingPerIp,
      maxTotal: pairing.maxPending,
    }),
    links,
    controlEvents: new ControlEvents(deps),
    edgeId: deps.edgeId,
    pairingEnabled: pairing.enabled,
    logger: deps.logger,
    close: () => links.close(),
  };
}
