import {
  EmptyParamsSchema,
  GatewayError,
  type NodePairRequestParams,
  NodePairRequestParamsSchema,
  type PairOutcome,
  PairRequestIdParamsSchema,
} from "@gw/contracts";
import type { DeviceServices } from "../devices/device-services.js";
import { assertSignedChallenge, canonicalKey, keyFingerprint } from "../devices/device-key.js";
import { type PendingPairing, pairRequestView } from "../devices/pairing-book.js";
import { type CallContext, defineMethod } from "./registry.js";

/** After an expiry lost the race to a resolver, how long until it looks again (the claim may lapse). */
const EXPIRY_RETRY_MS = 5_000;

/**
 * SPEC §5 pairing: a device asks (`node.pair.request`) on its socket and waits there; a control
 * client lists, approves or rejects; the device gets `node.pair.result` on that socket, with its
 * token when approved (docs/decisions.md, Authentication: there is no poll). Closing the socket
 * withdraws the request; unresolved, it expires after `gateway.pairing.pendingTtlSeconds`.
 */
export function pairingMethods(deps: DeviceServices) {
  const { book, registry, links, controlEvents } = deps;
  /** Sockets of this edge with a pending request (one each). */
  const asking = new Set<string>();

  /**
   * Ends a pending request that nobody resolved (it expired, or its device left): `taken` when
   * a resolver holds it (it will answer), `gone` when the store no longer has it.
   */
  const lapse = async (pending: PendingPairing, status: PairOutcome): Promise<"ended" | "taken" | "gone"> => {
    try {
      await book.claim(pending.requestId, { ending: true });
    } catch (err) {
      if (err instanceof GatewayError && err.code === "CONFLICT") return "taken";
      if (err instanceof GatewayError && err.code === "NOT_FOUND") return "gone";
      throw err;
    }
    await book.close(pending);
    controlEvents.publish("node.pair.resolved", { requestId: pending.requestId, deviceId: pending.deviceId, status });
    return "ended";
  };

  const wait = (pending: PendingPairing, ctx: CallContext) => {
    let settled = false;
    const stopWaiting = links.awaitResult(ctx.connId, (result) => {
      settled = true;
      ctx.sendEvent("node.pair.result", result);
      // A pairing connection has done its one job; the device connects again with its token.
      if (ctx.access === "pairing") ctx.close(1000, `pairing ${result.status}`);
    });
    const expire = async () => {
      if (settled) return;
      if ((await lapse(pending, "expired")) === "taken") {
        ctx.setDeadline(EXPIRY_RETRY_MS, () => void expire().catch((err) => deps.logger.warn({ err }, "pairing expiry failed")));
        return;
      }
      settled = true;
      stopWaiting();
      ctx.sendEvent("node.pair.result", { requestId: pending.requestId, deviceId: pending.deviceId, status: "expired" });
      if (ctx.access === "pairing") ctx.close(1000, "pairing request expired");
    };
    ctx.setDeadline(book.ttlMs, () => void expire().catch((err) => deps.logger.warn({ err }, "pairing expiry failed")));
    ctx.onClose(() => {
      asking.delete(ctx.connId);
      stopWaiting();
      if (!settled) void lapse(pending, "withdrawn").catch((err) => deps.logger.warn({ err }, "withdrawing a pairing request failed"));
    });
  };

  const request = async (params: NodePairRequestParams, ctx: CallContext) => {
    if (!deps.pairingEnabled) throw new GatewayError("FORBIDDEN", "device pairing is disabled on this gateway (gateway.pairing.enabled)");
    if (asking.has(ctx.connId)) throw new GatewayError("CONFLICT", "this connection has a pending pairing request already");
    const key =
      params.publicKey !== undefined && params.signature !== undefined
        ? { publicKey: params.publicKey, signature: params.signature }
        : undefined;
    if (key !== undefined) assertSignedChallenge(key, ctx.connId, params.deviceId);
    if ((await registry.get(params.deviceId)) !== null) {
      throw new GatewayError("CONFLICT", `device ${params.deviceId} is paired already; a control client can rotate its token or revoke it`);
    }
    asking.add(ctx.connId);
    let pending: PendingPairing;
    try {
      pending = await book.open({
        deviceId: params.deviceId,
        name: params.name,
        ...(key === undefined ? {} : { publicKey: canonicalKey(key.publicKey), keyFingerprint: keyFingerprint(key.publicKey) }),
        clientIp: ctx.principal.clientIp,
        edgeId: deps.edgeId,
        connId: ctx.connId,
      });
    } catch (err) {
      asking.delete(ctx.connId);
      throw err;
    }
    wait(pending, ctx);
    controlEvents.publish("node.pair.requested", pairRequestView(pending));
    return { requestId: pending.requestId, deviceId: pending.deviceId, status: "pending", expiresAt: pending.expiresAt };
  };

  const approve = async (requestId: string) => {
    const pending = await book.claim(requestId);
    let paired;
    try {
      paired = await registry.pair({
        deviceId: pending.deviceId,
        name: pending.name,
        ...(pending.publicKey === undefined ? {} : { publicKey: pending.publicKey, keyFingerprint: pending.keyFingerprint }),
        pairedAt: Date.now(),
        pairedFrom: pending.clientIp,
      });
    } catch (err) {
      await book.release(requestId);
      throw err;
    }
    const { deviceId } = pending;
    // The token is stored (hashed) before it leaves, so the device can use it the moment it has it.
    const delivered = await links.deliver(pending.edgeId, {
      requestId,
      connId: pending.connId,
      deviceId,
      status: "approved",
      token: paired.token,
    });
    await book.close(pending);
    if (!delivered) {
      // Nobody holds the token: undo the pairing rather than keep a device no one can be.
      await registry.unpair(deviceId, paired.record.tokenId);
      controlEvents.publish("node.pair.resolved", { requestId, deviceId, status: "withdrawn" });
      throw new GatewayError("NOT_FOUND", `device ${deviceId} stopped waiting (its socket closed); it must ask to be paired again`);
    }
    controlEvents.publish("node.pair.resolved", { requestId, deviceId, status: "approved" });
    return { requestId, deviceId, status: "approved", pairedAt: paired.record.pairedAt };
  };

  const reject = async (requestId: string) => {
    const pending = await book.claim(requestId);
    const { deviceId } = pending;
    // Best effort: a device that left is rejected all the same.
    await links.deliver(pending.edgeId, { requestId, connId: pending.connId, deviceId, status: "rejected", token: "" });
    await book.close(pending);
    controlEvents.publish("node.pair.resolved", { requestId, deviceId, status: "rejected" });
    return { requestId, deviceId, status: "rejected" };
  };

  return [
    defineMethod({ name: "node.pair.request", params: NodePairRequestParamsSchema, handler: request }),
    defineMethod({
      name: "node.pair.list",
      params: EmptyParamsSchema,
      handler: async () => ({ requests: (await book.list()).map(pairRequestView) }),
    }),
    defineMethod({ name: "node.pair.approve", params: PairRequestIdParamsSchema, handler: async (p) => approve(p.requestId) }),
    defineMethod({ name: "node.pair.reject", params: PairRequestIdParamsSchema, handler: async (p) => reject(p.requestId) }),
  ];
}
