import { decodeJson, GatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";
import { type MintedToken, mintDeviceToken, parseDeviceToken, tokenMatches } from "./device-token.js";

/** A paired device as the durable store keeps it (bucket `devices`, key = device id). */
const DeviceRecordSchema = z.object({
  deviceId: z.string(),
  name: z.string(),
  /** Ed25519 public key, base64url, when the device paired with one. */
  publicKey: z.string().optional(),
  keyFingerprint: z.string().optional(),
  tokenId: z.string(),
  /** Hex SHA-256 of the current token; the token itself is never stored. */
  tokenHash: z.string(),
  pairedAt: z.number(),
  rotatedAt: z.number(),
  /** The client IP the pairing request came from, for the approver's records. */
  pairedFrom: z.string(),
});
export type DeviceRecord = z.infer<typeof DeviceRecordSchema>;

/** A device as control clients see it (no token hash). */
export interface DeviceView {
  deviceId: string;
  name: string;
  keyFingerprint?: string;
  pairedAt: number;
  rotatedAt: number;
  pairedFrom: string;
}

/** Who a device token proved the caller to be. */
export interface DeviceIdentity {
  deviceId: string;
  tokenId: string;
}

export type NewDevice = Omit<DeviceRecord, "tokenId" | "tokenHash" | "rotatedAt">;

const encode = (record: DeviceRecord) => Buffer.from(JSON.stringify(record), "utf8");

export function deviceView(record: DeviceRecord): DeviceView {
  const { deviceId, name, keyFingerprint, pairedAt, rotatedAt, pairedFrom } = record;
  return keyFingerprint === undefined
    ? { deviceId, name, pairedAt, rotatedAt, pairedFrom }
    : { deviceId, name, keyFingerprint, pairedAt, rotatedAt, pairedFrom };
}

/**
 * Paired devices and their hashed tokens in the DurableStore, shared by every edge: a token is
 * checked against the store on every `connect`, so a rotation or revocation holds on every edge
 * as soon as its write has returned.
 */
export class DeviceRegistry {
  constructor(private readonly kv: DurableKv) {}

  async get(deviceId: string): Promise<DeviceRecord | null> {
    const entry = await this.kv.get(deviceId);
    return entry === null ? null : decodeJson(entry.value, DeviceRecordSchema, "device record");
  }

  /** The device a token belongs to, or null for any token that is not a device's current one. */
  async verify(token: string): Promise<DeviceIdentity | null> {
    const parsed = parseDeviceToken(token);
    if (parsed === undefined) return null;
    const record = await this.get(parsed.deviceId);
    if (record === null || record.tokenId !== parsed.tokenId || !tokenMatches(token, record.tokenHash)) return null;
    return { deviceId: record.deviceId, tokenId: record.tokenId };
  }

  /** Stores a newly paired device with a fresh token; CONFLICT when the id is paired already. */
  async pair(device: NewDevice): Promise<{ record: DeviceRecord; token: string }> {
    const minted = mintDeviceToken(device.deviceId);
    const record: DeviceRecord = { ...device, tokenId: minted.tokenId, tokenHash: minted.hash, rotatedAt: device.pairedAt };
    try {
      await this.kv.create(device.deviceId, encode(record));
    } catch (err) {
      if (err instanceof GatewayError && err.code === "CONFLICT") {
        throw new GatewayError("CONFLICT", `device ${device.deviceId} is paired already; revoke it first to pair it again`);
      }
      throw err;
    }
    return { record, token: minted.token };
  }

  /** A new token for the device; the old one stops working with this write. */
  async rotate(deviceId: string, now = Date.now()): Promise<{ record: DeviceRecord; token: MintedToken["token"] }> {
    const entry = await this.kv.get(deviceId);
    if (entry === null) throw new GatewayError("NOT_FOUND", `no paired device ${deviceId}`);
    const current = decodeJson(entry.value, DeviceRecordSchema, "device record");
    const minted = mintDeviceToken(deviceId);
    const record: DeviceRecord = { ...current, tokenId: minted.tokenId, tokenHash: minted.hash, rotatedAt: now };
    try {
      await this.kv.update(deviceId, encode(record), entry.revision);
    } catch (err) {
      if (err instanceof GatewayError && err.code === "CONFLICT") {
        throw new GatewayError("CONFLICT", `device ${deviceId} changed while its token was rotated; try again`);
      }
      throw err;
    }
    return { record, token: minted.token };
  }

  /** Forgets the device; NOT_FOUND when it is not paired. */
  async revoke(deviceId: string): Promise<void> {
    if ((await this.kv.get(deviceId)) === null) throw new GatewayError("NOT_FOUND", `no paired device ${deviceId}`);
    await this.kv.delete(deviceId);
  }

  /** Undoes a pairing whose token never reached the device, unless the token changed since. */
  async unpair(deviceId: string, tokenId: string): Promise<void> {
    const record = await this.get(deviceId);
    if (record?.tokenId === tokenId) await this.kv.delete(deviceId);
  }

  async list(): Promise<DeviceView[]> {
    const keys = (await this.kv.keys()).sort();
    const records = await Promise.all(keys.map((key) => this.get(key)));
    return records.filter((record): record is DeviceRecord => record !== null).map(deviceView);
  }
}
