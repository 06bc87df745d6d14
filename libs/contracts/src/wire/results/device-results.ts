import { z } from "zod";
import { timestamp } from "./common.js";

/** Answers of the pairing and device methods (SPEC §4.1, §5) and the payloads of their events. */

const fingerprint = z.string().describe("first 16 bytes of SHA-256 of the device's Ed25519 key, hex");

/** What every party is told about a pairing request (never the token). */
export const PairRequestViewSchema = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  name: z.string(),
  keyFingerprint: fingerprint.optional(),
  clientIp: z.string(),
  requestedAt: timestamp,
  expiresAt: timestamp,
});
export type PairRequestView = z.infer<typeof PairRequestViewSchema>;

export const DeviceViewSchema = z.object({
  deviceId: z.string(),
  name: z.string(),
  keyFingerprint: fingerprint.optional(),
  pairedAt: timestamp,
  rotatedAt: timestamp,
  pairedFrom: z.string().describe("client IP of the pairing request"),
});
export type DeviceView = z.infer<typeof DeviceViewSchema>;

export const NodePairRequestResultSchema = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.literal("pending"),
  expiresAt: timestamp.describe("the request lapses then (gateway.pairing.pendingTtlSeconds)"),
});

export const NodePairListResultSchema = z.object({ requests: z.array(PairRequestViewSchema).describe("oldest first") });

export const NodePairApproveResultSchema = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.literal("approved"),
  pairedAt: timestamp,
});

export const NodePairRejectResultSchema = z.object({ requestId: z.string(), deviceId: z.string(), status: z.literal("rejected") });

export const DeviceListResultSchema = z.object({ devices: z.array(DeviceViewSchema) });

export const DeviceTokenRotateResultSchema = z.object({
  deviceId: z.string(),
  token: z.string().describe("the new device token; the old one is refused from now on, on every edge"),
  rotatedAt: timestamp,
});

export const DeviceRevokeResultSchema = z.object({ deviceId: z.string(), revoked: z.literal(true) });

/** How a pending request ended, as control connections hear it. */
export const PAIR_OUTCOMES = ["approved", "rejected", "expired", "withdrawn"] as const;
export type PairOutcome = (typeof PAIR_OUTCOMES)[number];

export const PairResolvedPayloadSchema = z.object({ requestId: z.string(), deviceId: z.string(), status: z.enum(PAIR_OUTCOMES) });
export type PairResolvedPayload = z.infer<typeof PairResolvedPayloadSchema>;

/** What the waiting device is told on its own socket: the token when approved. */
export const PairResultPayloadSchema = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.enum(["approved", "rejected", "expired"]),
  token: z.string().optional().describe("the device token, when approved: connect with role node and auth.token"),
});
export type PairResultPayload = z.infer<typeof PairResultPayloadSchema>;

export const DeviceTokenRotatedPayloadSchema = z.object({ deviceId: z.string(), rotatedAt: timestamp });
export type DeviceTokenRotatedPayload = z.infer<typeof DeviceTokenRotatedPayloadSchema>;

export const DeviceRevokedPayloadSchema = z.object({ deviceId: z.string() });
export type DeviceRevokedPayload = z.infer<typeof DeviceRevokedPayloadSchema>;
