import { GatewayError, type NodePairRequestParams, type PairOutcome } from "@gw/contracts";
import type { CallContext } from "../call-context.js";
import { assertSignedChallenge, canonicalKey, keyFingerprint } from "./device-key.js";
import type { DeviceServices } from "./device-services.js";
import { type PendingPairing, pairRequestView } from "./device-pairing-book.js";

/** After an expiry lost the race to a resolver, how long until it looks again (the claim may lapse). */
const EXPIRY_RETRY_MS = 5_000;

type Lapse = "ended" | "taken" | "gone";

/**
 * SPEC §5 pairing: a device asks (`node.pair.request`) on its socket and waits there; a control
 * client lists, approves or rejects, on any edge; the device gets `node.pair.result` on that
 * socket, with its token when approved (docs/decisions.md, Authentication: there is no poll).
 * Closing the socket withdraws the request; unresolved, it expires after
 * `gateway.pairing.pendingTtlSeconds`.
 */
export class PairingDesk {
  /** Sockets of this edge with a pending request (one each). */
  private readonly asking = new Set<string>();

  constructor(private readonly deps: DeviceServices) {}

  async request(params: NodePairRequestParams, ctx: CallContext) {
    const { book, registry, controlEvents } = this.deps;
    if (!this.deps.pairingEnabled) {
      throw new GatewayError("FORBIDDEN", "device pairing is disabled on this gateway (gateway.pairing.enabled)");
    }
    if (this.asking.has(ctx.connId)) throw new GatewayError("CONFLICT", "this connection has a pending pairing request already");
    const key =
      params.publicKey !== undefined && params.signature !== undefined
        ? { publicKey: params.publicKey, signature: params.signature }
        : undefined;
    if (key !== undefined) assertSignedChallenge(key, ctx.connId, params.deviceId);
    if ((await registry.get(params.deviceId)) !== null) {
      throw new GatewayError("CONFLICT", `device ${params.deviceId} is paired already; a control client can rotate its token or revoke it`);
    }
    this.asking.add(ctx.connId);
    let pending: PendingPairing;
    try {
      pending = await book.open({
        deviceId: params.deviceId,
        name: params.name,
        ...(key === undefined ? {} : { publicKey: canonicalKey(key.publicKey), keyFingerprint: keyFingerprint(key.publicKey) }),
        clientIp: ctx.principal.clientIp,
        edgeId: this.deps.edgeId,
        connId: ctx.connId,
      });
    } catch (err) {
      this.asking.delete(ctx.connId);
      throw err;
    }
    this.wait(pending, ctx);
    controlEvents.publish("node.pair.requested", pairRequestView(pending));
    return { requestId: pending.requestId, deviceId: pending.deviceId, status: "pending" as const, expiresAt: pending.expiresAt };
  }

  async list() {
    return { requests: (await this.deps.book.list()).map(pairRequestView) };
  }

  async approve(requestId: string) {
    const { book, registry, links, controlEvents } = this.deps;
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
    return { requestId, deviceId, status: "approved" as const, pairedAt: paired.record.pairedAt };
  }

  async reject(requestId: string) {
    const { book, links, controlEvents } = this.deps;
    const pending = await book.claim(requestId);
    const { deviceId } = pending;
    // Best effort: a device that left is rejected all the same.
    await links.deliver(pending.edgeId, { requestId, connId: pending.connId, deviceId, status: "rejected", token: "" });
    await book.close(pending);
    controlEvents.publish("node.pair.resolved", { requestId, deviceId, status: "rejected" });
    return { requestId, deviceId, status: "rejected" as const };
  }

  /** The asking socket waits for its result, until the request expires, or it withdraws by closing. */
  private wait(pending: PendingPairing, ctx: CallContext): void {
    const { logger } = this.deps;
    let settled = false;
    const stopWaiting = this.deps.links.awaitResult(ctx.connId, (result) => {
      settled = true;
      ctx.sendEvent("node.pair.result", result);
      // A pairing connection has done its one job; the device connects again with its token.
      if (ctx.access === "pairing") ctx.close(1000, `pairing ${result.status}`);
    });
    const expire = async () => {
      if (settled) return;
      if ((await this.lapse(pending, "expired")) === "taken") {
        ctx.setDeadline(EXPIRY_RETRY_MS, () => void expire().catch((err) => logger.warn({ err }, "pairing expiry failed")));
        return;
      }
      settled = true;
      stopWaiting();
      ctx.sendEvent("node.pair.result", { requestId: pending.requestId, deviceId: pending.deviceId, status: "expired" });
      if (ctx.access === "pairing") ctx.close(1000, "pairing request expired");
    };
    ctx.setDeadline(this.deps.book.ttlMs, () => void expire().catch((err) => logger.warn({ err }, "pairing expiry failed")));
    ctx.onClose(() => {
      this.asking.delete(ctx.connId);
      stopWaiting();
      if (!settled) void this.lapse(pending, "withdrawn").catch((err) => logger.warn({ err }, "withdrawing a pairing request failed"));
    });
  }

  /**
   * Ends a pending request that nobody resolved (it expired, or its device left): `taken` when
   * a resolver holds it (it will answer), `gone` when the store no longer has it.
   */
  private async lapse(pending: PendingPairing, status: PairOutcome): Promise<Lapse> {
    const { book, controlEvents } = this.deps;
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
  }
}
