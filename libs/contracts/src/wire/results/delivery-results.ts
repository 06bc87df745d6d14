import { z } from "zod";
import { nullableMs, timestamp } from "./common.js";

/** Answers of the delivery methods (SPEC §4.1 `send`, `poll`, `channels.status`) and sender pairing. */

export const DeliveryResultSchema = z.object({
  sent: z.literal(true),
  messageId: z.string().describe("the platform's id of the first message"),
  messageIds: z.array(z.string()).describe("every platform message, in order (long texts and albums are several)"),
  channel: z.string(),
  accountId: z.string(),
  to: z.string().describe("the recipient as the channel normalised it"),
  cached: z.literal(true).optional().describe("an earlier request with this idempotencyKey produced this result"),
});
export type DeliveryResult = z.infer<typeof DeliveryResultSchema>;

export const ChannelRouteSchema = z.object({
  chat: z.string(),
  threadId: z.string().nullable().describe("the thread or topic; null outside threads"),
  agentId: z.string().describe("the agent that answered"),
  binding: z.number().int().nullable().describe("the index in the config's bindings that chose the agent; null: the channel's own agent"),
  at: timestamp,
});

export const ChannelAccountViewSchema = z.object({
  accountId: z.string(),
  configured: z.boolean(),
  reachable: z.boolean(),
  identity: z.string().nullable(),
  probedAt: nullableMs,
  lastSuccessAt: nullableMs,
  lastError: z.string().nullable(),
  lastErrorAt: nullableMs,
  rateLimitedUntil: nullableMs,
  lastInboundAt: nullableMs,
  lastInboundError: z.string().nullable(),
  lastInboundErrorAt: nullableMs,
  lastRoutes: z.array(ChannelRouteSchema).describe("the last chats that got a turn through this account (at most 20, most recent first)"),
});

export const ChannelViewSchema = z.object({
  id: z.string(),
  kind: z.string(),
  default: z.boolean(),
  polls: z.boolean(),
  textChunk: z.number().int(),
  accounts: z.array(ChannelAccountViewSchema),
});
export type ChannelView = z.infer<typeof ChannelViewSchema>;

export const ChannelsStatusResultSchema = z.object({ channels: z.array(ChannelViewSchema) });
export type ChannelsStatusResult = z.infer<typeof ChannelsStatusResultSchema>;

/** A person waiting for approval to talk to a bot (dmPolicy "pairing"). */
export const SenderPairingViewSchema = z.object({
  channel: z.string(),
  accountId: z.string(),
  sender: z.string().describe("the sender's platform id, as allowFrom lists it"),
  senderName: z.string(),
  code: z.string().describe("the code the bot sent to the sender, e.g. ABCD-EFGH"),
  requestedAt: timestamp,
  expiresAt: timestamp,
});
export type SenderPairingView = z.infer<typeof SenderPairingViewSchema>;

export const ChannelsPairingListResultSchema = z.object({ requests: z.array(SenderPairingViewSchema) });
export const ChannelsPairingApproveResultSchema = SenderPairingViewSchema.extend({ approved: z.literal(true) });
export const ChannelsPairingRejectResultSchema = SenderPairingViewSchema.extend({ rejected: z.literal(true) });
