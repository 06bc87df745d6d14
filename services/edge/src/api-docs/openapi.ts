import { GATEWAY_VERSION } from "@gw/contracts";
import { jsonSchema } from "./json-schema.js";
import { AUTHED_ERRORS, errors, json, ref, SCHEMAS } from "./openapi-components.js";

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

/** Health and the OpenAI-compatible model list. */
function healthAndModelPaths(): Record<string, unknown> {
  return {
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
        responses: { "200": { description: "the agents", content: json("ModelList") }, ...errors(401, 403, 429) },
      },
    },
    "/v1/models/{id}": {
      get: {
        operationId: "getModel",
        summary: "One agent as an OpenAI model object (`id` or `agent:<id>`).",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the agent", content: json("Model") }, ...errors(401, 403, 404, 429) },
      },
    },
  };
}

/** The OpenAI-compatible routes that run an agent: chat completions and responses. */
function openAiRunPaths(): Record<string, unknown> {
  return {
    "/v1/chat/completions": {
      post: {
        operationId: "createChatCompletion",
        summary:
          "OpenAI-compatible chat completion: model names an agent, user scopes a session. Function tools are the client's own: a call to one ends the answer with finish_reason tool_calls, and the next request's tool messages continue the turn. Unknown parameters, n > 1 and non-text content parts are refused with a 400 naming the parameter (param).",
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
    "/v1/responses": {
      post: {
        operationId: "createResponse",
        summary:
          "OpenAI Responses API on the same agent run: input is the conversation (messages, function_call and function_call_output items), instructions the extra system prompt. With store: true the exchange is kept in a session and previous_response_id continues it (the conversation's latest response only: an older one is 409), input then holding only the new turn; item_reference is refused.",
        requestBody: { required: true, content: json("ResponsesRequest") },
        responses: {
          "200": {
            description:
              "The response; with stream: true a server-sent-events stream of typed events (`event: <type>` and `data: <event JSON>`), from response.created to response.completed, or error and response.failed.",
            content: {
              ...json("Response"),
              "text/event-stream": {
                schema: { type: "string", description: "`event: <type>` and `data: <event JSON>` lines, each event followed by a blank line" },
                "x-event-data": ref("ResponseStreamEvent"),
              },
            },
          },
          ...errors(...AUTHED_ERRORS, 502),
        },
      },
    },
    "/v1/responses/{id}": {
      get: {
        operationId: "getResponse",
        summary: "A response stored with store: true, as it was answered.",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the stored response", content: json("Response") }, ...errors(401, 403, 404, 429) },
      },
      delete: {
        operationId: "deleteResponse",
        summary: "Forgets a stored response (its conversation's session stays): it can no longer be read or continued.",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": {
            description: "`{ id, object: \"response\", deleted: true }`",
            content: { "application/json": { schema: { type: "object", properties: { id: { type: "string" }, object: { const: "response" }, deleted: { const: true } } } } },
          },
          ...errors(401, 403, 404, 429),
        },
      },
    },
  };
}

/** `send` over HTTP, and the webhook routes of the hooks service (hooks.path, default /hooks). */
function sendAndHookPaths(): Record<string, unknown> {
  return {
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
    "/hooks/wake": {
      post: {
        operationId: "hookWake",
        summary: "Wake the main session now, or queue the text for the next heartbeat (hooks.path, default /hooks).",
        security: [{ hookToken: [] }, { hookTokenHeader: [] }],
        requestBody: { required: true, content: json("HookWakeRequest") },
        responses: { "200": { description: "woken or queued", content: json("HookWakeResult") }, ...errors(400, 401, 413, 429, 500, 503) },
      },
    },
    "/hooks/agent": {
      post: {
        operationId: "hookAgent",
        summary: "Run an agent on a message (SPEC §4.2 table); answered as soon as the run is accepted.",
        security: [{ hookToken: [] }, { hookTokenHeader: [] }],
        requestBody: { required: true, content: json("HookAgentRequest") },
        responses: { "202": { description: "the run is accepted and queued", content: json("HookAccepted") }, ...errors(400, 401, 413, 429, 500, 503) },
      },
    },
    "/hooks/{path}": {
      post: {
        operationId: "hookMapping",
        summary: "A hooks.mappings entry: any JSON body, templated into an agent run or a wake.",
        security: [{ hookToken: [] }, { hookTokenHeader: [] }],
        parameters: [{ name: "path", in: "path", required: true, schema: { type: "string" }, description: "a mapping's path" }],
        requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
        responses: { "202": { description: "the run or wake is accepted", content: json("HookAccepted") }, ...errors(400, 401, 404, 413, 429, 500, 503) },
      },
    },
  };
}

/** Platform webhooks into the delivery service, and the tools endpoint. */
function channelAndToolPaths(): Record<string, unknown> {
  return {
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
        "The gateway's HTTP endpoints. Errors use one body, { error: { message, type, param? } }, with the status of the error catalogue (docs/errors.md); server-side failures (5xx) carry a generic message and the request id, which every answer also sends as x-request-id. The WebSocket protocol is in asyncapi.json; docs/protocol.md explains both.",
    },
    servers: [
      {
        url: "http://{host}:{port}",
        variables: { host: { default: "127.0.0.1" }, port: { default: "18789" } },
      },
    ],
    security: [{ bearer: [] }],
    paths: {
      ...healthAndModelPaths(),
      ...openAiRunPaths(),
      ...sendAndHookPaths(),
      ...channelAndToolPaths(),
    },
    components: {
      securitySchemes: {
        hookToken: { type: "http", scheme: "bearer", description: "hooks.token (never in the query string)" },
        hookTokenHeader: { type: "apiKey", in: "header", name: "X-Gateway-Token", description: "hooks.token" },
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
