import { callRpc } from "@gw/bus";
import {
  ChannelsStatusParamsSchema,
  type ChannelsStatusResponse,
  type ChannelsStatusResult,
  type DeliveryReceipt,
  type DeliveryResult,
  type PollParams,
  PollParamsSchema,
  RPC,
  type SendParams,
  SendParamsSchema,
} from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod, type MethodResult, PayloadWithMeta } from "./registry.js";

export interface DeliveryMethodDeps extends BusDeps {
  /** How long a send may take in delivery (waiting its turn, retries), plus the bus hop. */
  sendTimeoutMs: number;
}

/** SPEC §4.1 `send` params -> the bus request (media: `mediaUrl` first, then `mediaUrls`). */
export function sendRequest(params: SendParams) {
  return {
    channel: params.channel,
    to: params.to,
    text: params.message,
    mediaUrls: [...(params.mediaUrl === undefined ? [] : [params.mediaUrl]), ...(params.mediaUrls ?? [])],
    gifPlayback: params.gifPlayback,
    accountId: params.accountId,
    threadId: params.threadId,
    sessionKey: params.sessionKey,
    idempotencyKey: params.idempotencyKey,
  };
}

function pollRequest(params: PollParams) {
  return {
    channel: params.channel,
    to: params.to,
    question: params.question,
    options: params.options,
    allowMultipleAnswers: params.allowMultipleAnswers,
    anonymous: params.anonymous,
    accountId: params.accountId,
    threadId: params.threadId,
    sessionKey: params.sessionKey,
    idempotencyKey: params.idempotencyKey,
  };
}

/** A receipt as the client sees it: SPEC's `sent`, `messageId`, `cached`, plus where it went. */
export function receiptPayload(receipt: DeliveryReceipt): { payload: DeliveryResult; meta?: { cached: true } } {
  const payload: DeliveryResult = {
    sent: true,
    messageId: receipt.messageId,
    messageIds: receipt.messageIds,
    channel: receipt.channel,
    accountId: receipt.accountId,
    to: receipt.to,
  };
  if (!receipt.cached) return { payload };
  payload.cached = true;
  return { payload, meta: { cached: true } };
}

function asResult(receipt: DeliveryReceipt): MethodResult<"send" | "poll"> {
  const { payload, meta } = receiptPayload(receipt);
  return meta === undefined ? payload : new PayloadWithMeta(payload, meta);
}

function statusPayload(res: ChannelsStatusResponse): ChannelsStatusResult {
  const at = (ms: number) => (ms > 0 ? ms : null);
  return {
    channels: res.channels.map((channel) => ({
      id: channel.id,
      kind: channel.kind,
      default: channel.isDefault,
      polls: channel.polls,
      textChunk: channel.textChunk,
      accounts: channel.accounts.map((account) => ({
        accountId: account.accountId,
        configured: account.configured,
        reachable: account.reachable,
        identity: account.identity || null,
        probedAt: at(account.probedAt),
        lastSuccessAt: at(account.lastSuccessAt),
        lastError: account.lastError || null,
        lastErrorAt: at(account.lastErrorAt),
        rateLimitedUntil: at(account.rateLimitedUntil),
        lastInboundAt: at(account.lastInboundAt),
        lastInboundError: account.lastInboundError || null,
        lastInboundErrorAt: at(account.lastInboundErrorAt),
        lastRoutes: account.lastRoutes.map((route) => ({
          chat: route.chat,
          threadId: route.threadId || null,
          agentId: route.agentId,
          binding: route.binding >= 0 ? route.binding : null,
          at: route.at,
        })),
      })),
    })),
  };
}

export function deliveryMethods(deps: DeliveryMethodDeps) {
  const sendOpts = { timeoutMs: deps.sendTimeoutMs };
  return [
    defineMethod({
      name: "send",
      params: SendParamsSchema,
      handler: async (params) =>
        asResult(await callRpc(deps.bus, deps.subjects, RPC.deliverySend, sendRequest(params), sendOpts)),
    }),
    defineMethod({
      name: "poll",
      params: PollParamsSchema,
      handler: async (params) =>
        asResult(await callRpc(deps.bus, deps.subjects, RPC.deliveryPoll, pollRequest(params), sendOpts)),
    }),
    defineMethod({
      name: "channels.status",
      params: ChannelsStatusParamsSchema,
      handler: async (params) =>
        statusPayload(
          await callRpc(deps.bus, deps.subjects, RPC.channelsStatus, { probe: params.probe }, {
            timeoutMs: deps.requestTimeoutMs,
          }),
        ),
    }),
  ];
}
