import { EmptyParamsSchema, NodePairRequestParamsSchema, PairRequestIdParamsSchema } from "@gw/contracts";
import type { DeviceServices } from "../devices/device-services.js";
import { PairingDesk } from "../devices/pairing-desk.js";
import { defineMethod } from "./registry.js";

/** `node.pair.*` (SPEC §4.1, §5): the device asks, a control client resolves (devices/pairing-desk.ts). */
export function pairingMethods(deps: DeviceServices) {
  const desk = new PairingDesk(deps);
  return [
    defineMethod({ name: "node.pair.request", params: NodePairRequestParamsSchema, handler: (p, ctx) => desk.request(p, ctx) }),
    defineMethod({ name: "node.pair.list", params: EmptyParamsSchema, handler: () => desk.list() }),
    defineMethod({ name: "node.pair.approve", params: PairRequestIdParamsSchema, handler: (p) => desk.approve(p.requestId) }),
    defineMethod({ name: "node.pair.reject", params: PairRequestIdParamsSchema, handler: (p) => desk.reject(p.requestId) }),
  ];
}
