/**
 * The shapes a client reads from the gateway (SPEC §2, §4.1, §6; docs/asyncapi.json has every
 * one): each method's answer is @gw/contracts' METHOD_RESULTS schema for it.
 */

/*
 * Types only: @gw/contracts runs in Node, and this client also runs in the browser (the web
 * chat bundles it), so nothing of it but its types comes in.
 */
import type { MethodResultOf, SessionMessageView, SessionPreviewView } from "@gw/contracts";

export type {
  AgentEntry,
  ConnectParams,
  ChannelView,
  GatewayStatusResult,
  MethodName,
  MethodResultOf,
  ModelProviderView,
  Role,
  RunInFlight,
  ToolsStatus,
  /** An element of `sessions.list`'s `sessions` (SPEC §2 "Session summary"). */
  SessionSummaryView as SessionSummary,
  /** A paired device (`device.list`). */
  DeviceView as DeviceEntry,
  /** A device waiting to be paired (`node.pair.list`, the `node.pair.requested` event). */
  PairRequestView as DevicePairRequest,
  /** A person waiting for approval to talk to a bot (`channels.pairing.list`). */
  SenderPairingView as SenderPairRequest,
} from "@gw/contracts";

export type ConnectAnswer = MethodResultOf<"connect">;
/** An item of an answer's `payloads`: text today (METHOD_RESULTS); a client skips types it does not know. */
export interface PayloadItem {
  type: string;
  text?: string;
}
export type AgentAnswer = MethodResultOf<"agent">;
export type WaitAnswer = MethodResultOf<"agent.wait">;
export type PreviewMessage = SessionMessageView;
export type SessionPreview = SessionPreviewView;

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
