import { PAIR_OUTCOMES } from "@gw/contracts";
import { z } from "zod";

/** Answers and events of pairing and device methods, for the API documents (as payloads.ts). */

const timestamp = z.number().int().describe("milliseconds since the Unix epoch");
const fingerprint = z.string().describe("first 16 bytes of SHA-256 of the device's Ed25519 key, hex");

export const PairRequestView = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  name: z.string(),
  keyFingerprint: fingerprint.optional(),
  clientIp: z.string(),
  requestedAt: timestamp,
  expiresAt: timestamp,
});

export const NodePairRequestResult = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.literal("pending"),
  expiresAt: timestamp.describe("the request lapses then (gateway.pairing.pendingTtlSeconds)"),
});

export const NodePairListResult = z.object({ requests: z.array(PairRequestView).describe("oldest first") });

export const NodePairApproveResult = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.literal("approved"),
  pairedAt: timestamp,
});

export const NodePairRejectResult = z.object({ requestId: z.string(), deviceId: z.string(), status: z.literal("rejected") });

export const DeviceListResult = z.object({
  devices: z.array(
    z.object({
      deviceId: z.string(),
      name: z.string(),
      keyFingerprint: fingerprint.optional(),
      pairedAt: timestamp,
      rotatedAt: timestamp,
      pairedFrom: z.string().describe("client IP of the pairing request"),
    }),
  ),
});

export const DeviceTokenRotateResult = z.object({
  deviceId: z.string(),
  token: z.string().describe("the new device token; the old one is refused from now on, on every edge"),
  rotatedAt: timestamp,
});

export const DeviceRevokeResult = z.object({ deviceId: z.string(), revoked: z.literal(true) });

export const PairResolvedEvent = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.enum(PAIR_OUTCOMES),
});

export const PairResultEvent = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  status: z.enum(["approved", "rejected", "expired"]),
  token: z.string().optional().describe("the device token, when approved: connect with role node and auth.token"),
});

export const DeviceTokenRotatedEvent = z.object({ deviceId: z.string(), rotatedAt: timestamp });
export const DeviceRevokedEvent = z.object({ deviceId: z.string() });
