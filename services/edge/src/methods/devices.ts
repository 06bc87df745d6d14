import { DeviceIdParamsSchema, EmptyParamsSchema, GatewayError } from "@gw/contracts";
import type { DeviceServices } from "../devices/device-services.js";
import { defineMethod } from "./registry.js";

/**
 * Paired devices: control lists and revokes them and rotates any device's token; a device
 * rotates its own (SPEC §4.1 `device.token.rotate`). A rotation or revocation is written to the
 * durable store first, so no edge accepts the old token from then on, then broadcast, so every
 * edge closes the sockets that still use it.
 */
export function deviceMethods(deps: DeviceServices) {
  const { registry, links, controlEvents } = deps;
  return [
    defineMethod({
      name: "device.list",
      params: EmptyParamsSchema,
      handler: async () => ({ devices: await registry.list() }),
    }),
    defineMethod({
      name: "device.token.rotate",
      params: DeviceIdParamsSchema,
      handler: async ({ deviceId }, ctx) => {
        const own = ctx.principal.device;
        if (ctx.access !== "control" && own?.deviceId !== deviceId) {
          throw new GatewayError("FORBIDDEN", "a device may rotate only its own token (connect with it); control may rotate any");
        }
        const { record, token } = await registry.rotate(deviceId);
        // The asking socket holds the new token now: it stays, every other one of the device goes.
        if (own?.deviceId === deviceId) {
          own.tokenId = record.tokenId;
          links.rebind(ctx.connId, deviceId, record.tokenId);
        }
        await links.announce(deviceId, record.tokenId);
        controlEvents.publish("device.token.rotated", { deviceId, rotatedAt: record.rotatedAt });
        return { deviceId, token, rotatedAt: record.rotatedAt };
      },
    }),
    defineMethod({
      name: "device.revoke",
      params: DeviceIdParamsSchema,
      handler: async ({ deviceId }) => {
        await registry.revoke(deviceId);
        await links.announce(deviceId, "");
        controlEvents.publish("device.revoked", { deviceId });
        return { deviceId, revoked: true };
      },
    }),
  ];
}
