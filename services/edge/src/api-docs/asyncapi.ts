import { GATEWAY_VERSION, RequestFrameSchema, ROLES } from "@gw/contracts";
import { z } from "zod";
import { eventFamily, mayCall, mayReceive } from "../auth/permissions.js";
import { jsonSchema } from "./json-schema.js";
import { WsErrorFrame } from "./payloads.js";
import { WS_EVENTS, WS_METHODS, type WsMethodDoc } from "./ws-catalogue.js";

const CHANNEL = { $ref: "#/channels/gateway" };
const message = (key: string) => ({ $ref: `#/channels/gateway/messages/${key}` });

/** A method's request frame: the SPEC §1 envelope with this method's name and params. */
function requestFrame(method: WsMethodDoc): Record<string, unknown> {
  const envelope = jsonSchema(RequestFrameSchema, "draft-7") as { properties: Record<string, unknown>; required: string[] };
  return {
    ...envelope,
    properties: { ...envelope.properties, method: { type: "string", const: method.name }, params: jsonSchema(method.params, "draft-7") },
  };
}

function successFrame(method: WsMethodDoc): Record<string, unknown> {
  return jsonSchema(
    z.object({ id: z.number().describe("the request's id"), ok: z.literal(true), payload: method.result, meta: z.record(z.string(), z.unknown()).optional() }),
    "draft-7",
  );
}

/**
 * The WebSocket protocol as AsyncAPI 3, built from the zod schemas the edge validates frames and
 * params with. From the gateway's side: it receives requests (and replies), it sends events.
 */
export function buildAsyncApi(): Record<string, unknown> {
  const messages: Record<string, unknown> = {
    error: {
      name: "error",
      title: "Error response",
      summary: "Any request can fail with this frame; code is from the error catalogue (docs/errors.md).",
      payload: jsonSchema(WsErrorFrame, "draft-7"),
    },
  };
  const operations: Record<string, unknown> = {};
  for (const method of WS_METHODS) {
    messages[`${method.name}.request`] = { name: method.name, title: `${method.name} request`, payload: requestFrame(method) };
    messages[`${method.name}.response`] = { name: `${method.name}.response`, title: `${method.name} response`, payload: successFrame(method) };
    operations[method.name] = {
      action: "receive",
      channel: CHANNEL,
      summary: method.summary,
      description: `Roles: ${method.roles.join(", ")}${mayCall("pairing", method.name) ? "; also a pairing connection" : ""}.`,
      messages: [message(`${method.name}.request`)],
      reply: { channel: CHANNEL, messages: [message(`${method.name}.response`), message("error")] },
    };
  }
  for (const event of WS_EVENTS) {
    const key = `event.${event.event}`;
    messages[key] = {
      name: event.event,
      title: `${event.event} event`,
      summary: event.summary,
      payload: jsonSchema(z.object({ event: z.literal(event.event), payload: event.payload }), "draft-7"),
    };
    const receivers = ROLES.filter((role) => mayReceive(role, eventFamily(event.event)));
    operations[key] = {
      action: "send",
      channel: CHANNEL,
      summary: event.summary,
      description: `Received by roles: ${receivers.join(", ")}${mayReceive("pairing", eventFamily(event.event)) ? "; also a pairing connection" : ""}.`,
      messages: [message(key)],
    };
  }
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Agent gateway WebSocket protocol",
      version: GATEWAY_VERSION,
      description:
        "JSON frames over one WebSocket. Requests carry jsonrpc \"2.0\", a numeric id, a method and params; every request gets exactly one response with its id; events carry no id. connect comes first. docs/protocol.md explains the protocol; openapi.json holds the HTTP endpoints.",
    },
    servers: {
      gateway: { host: "127.0.0.1:18789", protocol: "ws", pathname: "/", description: "the edge (also on /ws)" },
    },
    defaultContentType: "application/json",
    channels: { gateway: { address: "/", title: "The gateway socket", messages } },
    operations,
  };
}
