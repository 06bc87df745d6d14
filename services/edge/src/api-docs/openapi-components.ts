import { ApiSendBodySchema, HookAgentBodySchema, HookWakeBodySchema, SendParamsSchema } from "@gw/contracts";
import { z } from "zod";
import { ChatBodySchema } from "../http/openai/chat-body.js";
import { ResponsesBodySchema } from "../http/openai/responses-body.js";
import { ToolsInvokeBodySchema } from "../http/tools-invoke.js";
import {
  ChatCompletion,
  ChatCompletionChunk,
  Health,
  Model,
  ModelList,
  ResponseObject,
  ResponseStreamEvent,
  ToolsInvokeResult,
} from "./openapi-answers.js";
import { ApiSendResult, HttpErrorBody } from "./payloads.js";

/** The components/schemas of openapi.json: each a zod schema the edge validates or answers with. */
export const SCHEMAS = {
  HttpErrorBody,
  Health,
  Model,
  ModelList,
  ChatCompletionsRequest: ChatBodySchema,
  ChatCompletion,
  ChatCompletionChunk,
  ResponsesRequest: ResponsesBodySchema,
  Response: ResponseObject,
  ResponseStreamEvent,
  ToolsInvokeRequest: ToolsInvokeBodySchema,
  ToolsInvokeResult,
  SendRequest: ApiSendBodySchema.extend({ params: SendParamsSchema }),
  SendResult: ApiSendResult,
  HookWakeRequest: HookWakeBodySchema,
  HookWakeResult: z.object({
    ok: z.literal(true),
    mode: z.enum(["now", "next-heartbeat"]),
    sessionKey: z.string(),
    runId: z.string().optional().describe("the main session's turn that took the text (mode now)"),
    duplicate: z.literal(true).optional(),
  }),
  HookAgentRequest: HookAgentBodySchema,
  HookAccepted: z.object({
    ok: z.literal(true),
    runId: z.string(),
    sessionKey: z.string(),
    wakeMode: z.enum(["now", "next-heartbeat"]),
    duplicate: z.literal(true).optional().describe("a repeated delivery (Idempotency-Key or the mapping's id field)"),
  }),
};

/** How a path refers to the schemas above. */
export const ref = (name: keyof typeof SCHEMAS) => ({ $ref: `#/components/schemas/${name}` });
export const json = (name: keyof typeof SCHEMAS) => ({ "application/json": { schema: ref(name) } });

/** The error answers a path can give, each with the catalogue's one body. */
export function errors(...statuses: number[]): Record<string, unknown> {
  const why: Record<number, string> = {
    400: "invalid request (the message names each bad field, e.g. body.messages)",
    401: "missing or wrong credentials",
    403: "a proxy's or overlay network's user without control (gateway.auth.trustedProxy / gateway.overlay: roles, controlUsers)",
    413: "body over gateway.limits.maxBodyBytes",
    429: "too many failed authentication attempts from this address; see Retry-After",
    404: "no such model, endpoint or hook mapping",
    500: "internal error (details are logged, never sent)",
    409: "the idempotencyKey was used for a different request",
    502: "the model provider, a tool's upstream or a messaging platform failed",
    503: "no replica of the owning service is reachable",
    504: "the owning service did not answer in time",
  };
  return Object.fromEntries(statuses.map((s) => [String(s), { description: why[s], content: json("HttpErrorBody") }]));
}

/** What any authenticated route can answer. */
export const AUTHED_ERRORS = [400, 401, 403, 413, 429, 500, 503, 504];
