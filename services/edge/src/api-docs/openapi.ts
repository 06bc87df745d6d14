import { ApiSendBodySchema, GATEWAY_VERSION, SendParamsSchema } from "@gw/contracts";
import { z } from "zod";
import { ChatCompletionsBodySchema } from "../http/chat-completions-body.js";
import { ToolsInvokeBodySchema } from "../http/tools-invoke.js";
import { jsonSchema } from "./json-schema.js";
import { ApiSendResult, HttpErrorBody } from "./payloads.js";

/** Answers of the HTTP endpoints (documentation only; see payloads.ts). */
const Health = z.object({ ok: z.boolean(), status: z.enum(["ok", "degraded"]) });
const ModelList = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ id: z.string().describe("an agent id"), object: z.literal("model"), created: z.number(), owned_by: z.string() })),
});
const ChatCompletion = z.object({
  id: z.string().describe("chatcmpl_<uuid>"),
  object: z.literal("chat.completion"),
  created: z.number().int().describe("Unix seconds"),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal("assistant"), content: z.string() }),
      finish_reason: z.literal("stop"),
    }),
  ),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }),
});
const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({ role: z.literal("assistant").optional(), content: z.string().optional() }),
      finish_reason: z.union([z.literal("stop"), z.null()]),
    }),
  ),
});
const ToolsInvokeResult = z.object({ ok: z.literal(true), result: z.record(z.string(), z.unknown()).describe("tool-specific; has content") });

const SCHEMAS = {
  HttpErrorBody,
  Health,
  ModelList,
  ChatCompletionsRequest: ChatCompletionsBodySchema,
  ChatCompletion,
  ChatCompletionChunk,
  ToolsInvokeRequest: ToolsInvokeBodySchema,
  ToolsInvokeResult,
  SendRequest: ApiSendBodySchema.extend({ params: SendParamsSchema }),
  SendResult: ApiSendResult,
};

const ref = (name: keyof typeof SCHEMAS) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: keyof typeof SCHEMAS) => ({ "application/json": { schema: ref(name) } });

function errors(...statuses: number[]): Record<string, unknown> {
  const why: Record<number, string> = {
    400: "invalid request (the message names each bad field, e.g. body.messages)",
    401: "missing or wrong credentials",
    413: "body over gateway.limits.maxBodyBytes",
    429: "too many failed authentication attempts from this address; see Retry-After",
    500: "internal error (details are logged, never sent)",
    409: "the idempotencyKey was used for a different request",
    502: "the model provider, a tool's upstream or a messaging platform failed",
    503: "no replica of the owning service is reachable",
    504: "the owning service did not answer in time",
  };
  return Object.fromEntries(statuses.map((s) => [String(s), { description: why[s], content: json("HttpErrorBody") }]));
}

const AUTHED_ERRORS = [400, 401, 413, 429, 500, 503, 504];

/** A channel's webhook route: the platform's own request and answer, verified with its secret. */
function webhookPath(withAccount: boolean): Record<string, unknown> {
  const parameters = [
    { name: "channelId", in: "path", required: true, schema: { type: "string" }, description: "a configured channel id" },
    ...(withAccount ? [{ name: "accountId", in: "path", required: true, schema: { type: "string" }, description: "one of the channel's accounts" }] : []),
  ];
  const account = withAccount ? "the named account" : "the channel's default (first) account";
  const responses = {
    "200": { description: "stored; the body is what the platform expects (WhatsApp's hub.challenge as text, else JSON)" },
    "400": { description: "the body is not the platform's format" },
    "401": { description: "missing or wrong platform secret or signature; counts as a failed authentication" },
    "403": { description: "the channel has no secret configured to verify the request with (or a wrong verify token)" },
    "404": { description: "unknown channel or account, or a channel that takes no webhooks" },
    "413": { description: "body over delivery.inbound.maxBodyBytes" },
    "429": { description: "too many failed authentication attempts from this address" },
    "503": { description: "the delivery service could not store the event; the platform sends it again" },
  };
  const summary = `Inbound webhook of ${account}: Telegram (X-Telegram-Bot-Api-Secret-Token), WhatsApp (X-Hub-Signature-256; GET for the verification handshake), BlueBubbles (?password=), Slack (signing secret).`;
  return {
    parameters,
    post: { operationId: withAccount ? "accountWebhook" : "channelWebhook", summary, security: [], responses },
    get: { operationId: withAccount ? "accountWebhookVerify" : "channelWebhookVerify", summary: "WhatsApp's subscription check (hub.mode, hub.verify_token, hub.challenge).", security: [], responses },
  };
}

/** The HTTP surface as OpenAPI 3.1, built from the zod schemas the edge validates bodies with. */
export function buildOpenApi(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent gateway HTTP API",
      version: GATEWAY_VERSION,
      description:
        "The gateway's HTTP endpoints. Errors use one body, { error: { message, type } }, with the status of the error catalogue (docs/errors.md). The WebSocket protocol is in asyncapi.json; docs/protocol.md explains both.",
    },
    servers: [
      {
        url: "http://{host}:{port}",
        variables: { host: { default: "127.0.0.1" }, port: { default: "18789" } },
      },
    ],
    security: [{ bearer: [] }],
    paths: {
      "/health": {
        get: {
          operationId: "health",
          summary: "Liveness and readiness: 503 while the bus or a store is disconnected.",
          security: [],
          responses: {
            "200": { description: "connected", content: json("Health") },
            "503": { description: "degraded", content: json("Health") },
          },
        },
      },
      "/v1/models": {
        get: {
          operationId: "listModels",
          summary: "Every agent as an OpenAI model object.",
          responses: { "200": { description: "the agents", content: json("ModelList") }, ...errors(401, 429, 500, 503, 504) },
        },
      },
      "/v1/chat/completions": {
        post: {
          operationId: "createChatCompletion",
          summary: "OpenAI-compatible chat completion: model names an agent, user scopes a session.",
          requestBody: { required: true, content: json("ChatCompletionsRequest") },
          responses: {
            "200": {
              description:
                "The completion; with stream: true a server-sent-events stream of `data: <chunk>` lines ending with `data: [DONE]`. A failure after the stream began arrives as a last `data: <HttpErrorBody>` before [DONE].",
              content: {
                ...json("ChatCompletion"),
                "text/event-stream": {
                  schema: { type: "string", description: "`data: <ChatCompletionChunk JSON>` lines, each followed by a blank line" },
                  "x-event-data": ref("ChatCompletionChunk"),
                },
              },
            },
            ...errors(...AUTHED_ERRORS, 502),
          },
        },
      },
      "/api/send": {
        post: {
          operationId: "send",
          summary: "The WebSocket `send` request frame over HTTP: deliver a message on a channel, once per idempotencyKey.",
          requestBody: { required: true, content: json("SendRequest") },
          responses: {
            "200": { description: "the response frame; meta.cached on a repeated idempotencyKey", content: json("SendResult") },
            ...errors(...AUTHED_ERRORS, 409, 502),
          },
        },
      },
      "/api/channels/{channelId}/webhook": webhookPath(false),
      "/api/channels/{channelId}/{accountId}/webhook": webhookPath(true),
      "/api/chatapp/events": {
        post: {
          operationId: "slackEvents",
          summary:
            "Slack's Events API (SPEC §4.2): checked with each Slack channel's signing secret (v0 HMAC-SHA256, 5-minute window); url_verification answers its challenge.",
          security: [],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "a Slack Events API request" } } } },
          responses: {
            "200": { description: "stored (or the url_verification challenge)", content: { "application/json": { schema: { type: "object" } } } },
            "401": { description: "missing, wrong or stale signature; nothing stored" },
            "413": { description: "body over delivery.inbound.maxBodyBytes" },
            "503": { description: "the delivery service could not store the event; Slack sends it again" },
          },
        },
      },
      "/api/tools/invoke": {
        post: {
          operationId: "invokeTool",
          summary: "Run one tool on an agent runner.",
          requestBody: { required: true, content: json("ToolsInvokeRequest") },
          responses: { "200": { description: "the tool's result", content: json("ToolsInvokeResult") }, ...errors(...AUTHED_ERRORS, 502) },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "gateway.auth.token or gateway.auth.password; loopback, overlay and trusted-proxy identities need none (docs/protocol.md).",
        },
      },
      schemas: Object.fromEntries(Object.entries(SCHEMAS).map(([name, schema]) => [name, jsonSchema(schema, "draft-2020-12")])),
    },
  };
}
