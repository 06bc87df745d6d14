import { callRpc } from "@gw/bus";
import {
  ChannelsPairingApproveParamsSchema,
  ChannelsPairingListParamsSchema,
  ChannelsPairingRejectParamsSchema,
  GatewayError,
  type PairingRequest,
  RPC,
  type SenderPairingView,
} from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod } from "./registry.js";

function requestView(request: PairingRequest): SenderPairingView {
  return {
    channel: request.channel,
    accountId: request.accountId,
    sender: request.sender,
    senderName: request.senderName,
    code: request.code,
    requestedAt: request.requestedAt,
    expiresAt: request.expiresAt,
  };
}

/**
 * Pairing of people who write to a bot (dmPolicy "pairing"): the codes waiting for approval, and
 * approving one, after which delivery answers that sender, or rejecting it. For control connections only: an
 * approval lets someone outside the gateway talk to its agents.
 */
export function channelPairingMethods(deps: BusDeps) {
  const opts = { timeoutMs: deps.requestTimeoutMs };
  /** Approving and rejecting take the same request and answer the decided sender, if any. */
  const decide = (params: { channel: string; code: string; accountId?: string }) => ({
    channel: params.channel,
    code: params.code,
    accountId: params.accountId,
  });
  /** Delivery answers the decided request or NOT_FOUND; an answer without one is its bug. */
  const decided = (request: PairingRequest | undefined) => {
    if (request === undefined) throw new GatewayError("INTERNAL", "delivery decided a pairing request without naming it");
    return requestView(request);
  };
  return [
    defineMethod({
      name: "channels.pairing.list",
      params: ChannelsPairingListParamsSchema,
      handler: async (params) => {
        const res = await callRpc(deps.bus, deps.subjects, RPC.channelsPairingList, { channel: params.channel }, opts);
        return { requests: res.requests.map(requestView) };
      },
    }),
    defineMethod({
      name: "channels.pairing.approve",
      params: ChannelsPairingApproveParamsSchema,
      handler: async (params) => {
        const res = await callRpc(deps.bus, deps.subjects, RPC.channelsPairingApprove, decide(params), opts);
        return { approved: true, ...decided(res.approved) };
      },
    }),
    defineMethod({
      name: "channels.pairing.reject",
      params: ChannelsPairingRejectParamsSchema,
      handler: async (params) => {
        const res = await callRpc(deps.bus, deps.subjects, RPC.channelsPairingReject, decide(params), opts);
        return { rejected: true, ...decided(res.rejected) };
      },
    }),
  ];
}
