/**
 * The shapes a chat client reads from the gateway (SPEC §2, §4.1, §6; docs/asyncapi.json has
 * every one). Only the fields a client acts on are typed; the gateway may send more.
 */

export type Role = "control" | "node" | "webchat";

export interface ConnectParams {
  role: Role;
  auth?: { token?: string; password?: string };
  client?: { name: string; version: string };
}

export interface ConnectAnswer {
  connId: string;
  role: Role;
  auth: { method: string };
  /** A webchat connection's own session (`webchat:<owner>`); its threads are `<key>:<name>`. */
  session?: { key: string };
  methods: string[];
  protocol: number;
}

export interface AgentEntry {
  id: string;
  name: string;
  model: string;
  description: string;
}

export interface PayloadItem {
  type: string;
  text?: string;
}

export interface AgentAnswer {
  runId: string;
  payloads: PayloadItem[];
}

export interface PreviewMessage {
  type: "message";
  role: string;
  sender: string;
  body: string;
  timestamp: number;
}

export interface SessionPreview {
  key: string;
  agentId: string;
  model: string;
  /** Newest first. */
  messages: PreviewMessage[];
}

/** The payload of an `agent` event. */
export interface AgentEvent {
  runId: string;
  stream: "assistant" | "tool" | "lifecycle" | string;
  seq?: number;
  data: {
    type?: string;
    text?: string;
    phase?: string;
    name?: string;
    toolCallId?: string;
    error?: string;
    code?: string;
  };
}

/** Text of the `text` items of an answer, joined. */
export function payloadText(payloads: readonly PayloadItem[]): string {
  return payloads
    .filter((item) => item.type === "text" && typeof item.text === "string")
    .map((item) => item.text)
    .join("\n\n");
}

/** An element of `sessions.list`'s `sessions` (SPEC §2 "Session summary"). */
export interface SessionSummary {
  key: string;
  agentId: string;
  model: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  thinking?: string;
}

/** A paired device (`device.list`). */
export interface DeviceEntry {
  deviceId: string;
  name: string;
  keyFingerprint?: string;
  pairedAt: number;
  rotatedAt: number;
  pairedFrom: string;
}

/** A device waiting to be paired (`node.pair.list`, the `node.pair.requested` event). */
export interface DevicePairRequest {
  requestId: string;
  deviceId: string;
  name: string;
  keyFingerprint?: string;
  clientIp: string;
  requestedAt: number;
  expiresAt: number;
}

/** A person waiting for approval to talk to a bot (`channels.pairing.list`). */
export interface SenderPairRequest {
  channel: string;
  accountId: string;
  sender: string;
  senderName: string;
  code: string;
  requestedAt: number;
  expiresAt: number;
}
