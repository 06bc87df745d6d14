import { callRpc } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import {
  describeIssues,
  exceedsJsonDepth,
  GatewayError,
  type HookAccepted,
  HookAgentBodySchema,
  HookWakeBodySchema,
  jsonDepthMessage,
  RPC,
} from "@gw/contracts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { secretEquals } from "../auth/authenticate.js";
import type { TrustedProxies } from "../auth/client-address.js";
import type { FailedAuthLimiter } from "../auth/failed-auth-limiter.js";
import type { BusDeps } from "../bus-deps.js";
import { bearerCredential } from "../auth/bearer-auth.js";

export interface HooksHttpDeps extends BusDeps {
  hooks: GatewayConfig["hooks"];
  limiter: FailedAuthLimiter;
  trustedProxies: TrustedProxies;
}

/** Never handed on to the hooks service, so no template (and no agent) can read a credential. */
const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "x-gateway-token", "cookie"]);
const IDEMPOTENCY_KEY_MAX = 256;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

/** The hook token as presented: `Authorization: Bearer <token>`, else `X-Gateway-Token: <token>`. */
function presentedToken(request: FastifyRequest): string | undefined {
  return bearerCredential(header(request, "authorization")) ?? header(request, "x-gateway-token");
}

/** A token in the URL ends up in access logs and browser history: refused even when right. */
function urlNamesToken(url: URLSearchParams): boolean {
  for (const name of url.keys()) if (name.toLowerCase() === "token") return true;
  return false;
}

/**
 * The hook token under any other name. Asked only of a caller whose header already proved it
 * knows the token: before that, every query value would be one more guess the limiter never sees.
 */
function urlCarriesToken(url: URLSearchParams, token: string): boolean {
  for (const value of url.values()) if (value !== "" && secretEquals(value, token)) return true;
  return false;
}

function queryOf(request: FastifyRequest): URLSearchParams {
  return new URL(request.url, "http://hooks.invalid").searchParams;
}

/** The Idempotency-Key header; undefined without one (an empty header is none). */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = header(request, "idempotency-key");
  if (key === undefined || key === "") return undefined;
  if (key.length > IDEMPOTENCY_KEY_MAX) {
    throw new GatewayError("INVALID_REQUEST", `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters`);
  }
  return key;
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "body"));
  return parsed.data;
}

/** Headers for mapping templates: lowercase names, repeats joined, credentials removed. */
function forwardedHeaders(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || CREDENTIAL_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * The HTTP answer: wake 200 `{ ok, mode, sessionKey, runId? }` (runId: the main session's turn
 * that took the text, for "now"); agent 202 `{ ok, runId, sessionKey, wakeMode }`, accepted and
 * queued, not finished. A repeated delivery gets the first answer with `duplicate: true`.
 */
function answer(reply: FastifyReply, accepted: HookAccepted): FastifyReply {
  const duplicate = accepted.duplicate ? { duplicate: true } : {};
  if (accepted.action === "wake") {
    const runId = accepted.runId === "" ? {} : { runId: accepted.runId };
    return reply.status(200).send({ ok: true, mode: accepted.wakeMode, sessionKey: accepted.sessionKey, ...runId, ...duplicate });
  }
  return reply
    .status(202)
    .send({ ok: true, runId: accepted.runId, sessionKey: accepted.sessionKey, wakeMode: accepted.wakeMode, ...duplicate });
}

/** The hook token, checked within the client IP's failed-auth budget and never taken from the URL. */
function hookAuthentication(deps: HooksHttpDeps, token: string) {
  return async (request: FastifyRequest) => {
    const clientIp = deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers);
    deps.limiter.assertAllowed(clientIp);
    const query = queryOf(request);
    const inUrl = () =>
      new GatewayError("INVALID_REQUEST", "the hook token is accepted only in the Authorization or X-Gateway-Token header, never in the URL");
    if (urlNamesToken(query)) throw inUrl();
    const presented = presentedToken(request);
    const right = await deps.limiter.check(clientIp, async () => presented !== undefined && secretEquals(presented, token), (ok) => !ok);
    if (!right) throw new GatewayError("UNAUTHORIZED", "authentication failed: missing or wrong hook token");
    if (urlCarriesToken(query, token)) throw inUrl();
  };
}

/** After the token: a declared oversize body is 413 and an unknown mapping 404, before any body is read. */
function hookAdmission(hooks: HooksHttpDeps["hooks"]) {
  const mappingPaths = new Set(hooks.mappings.map((mapping) => mapping.path));
  return async (request: FastifyRequest) => {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > hooks.maxBodyBytes) throw new GatewayError("PAYLOAD_TOO_LARGE", `hook request body is larger than ${hooks.maxBodyBytes} bytes`);
    const mapping = (request.params as { "*"?: string })["*"];
    if (mapping !== undefined && !mappingPaths.has(mapping)) {
      throw new GatewayError("NOT_FOUND", `no hook at ${hooks.path}/${mapping}`);
    }
  };
}

/**
 * Senders label JSON bodies in many ways (application/json, text/plain, vendor types, no
 * Content-Type at all): every body is read as text and must be JSON, within the hook limit and
 * the nesting depth every JSON body is held to.
 */
function parseEveryBodyAsJson(scope: FastifyInstance, bodyLimit: number): void {
  scope.removeAllContentTypeParsers();
  const parseJson = scope.getDefaultJsonParser("error", "error");
  scope.addContentTypeParser("*", { parseAs: "string", bodyLimit }, (request, body, done) => {
    const text = body as string;
    // No body at all: the built-in endpoints then say what is missing; a mapping gets {}.
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    if (exceedsJsonDepth(text)) {
      done(new GatewayError("INVALID_REQUEST", `request body ${jsonDepthMessage()}`), undefined);
      return;
    }
    // fastify's default parser answers through its callback and returns nothing; its type allows a promise.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises
    parseJson(request, text, (err, value) => {
      if (err) done(new GatewayError("INVALID_REQUEST", `request body is not valid JSON: ${err.message}`), undefined);
      else done(null, value);
    });
  });
}

/**
 * SPEC §4.2 hook endpoints, an encapsulated plugin (under `hooks.path`) with its own
 * credential, body limit and body parser: `POST <path>/wake`, `POST <path>/agent` and
 * `POST <path>/<mapping>`. Only the hook token opens them (SPEC §5), in a header, compared in
 * constant time within the client IP's failed-auth budget like every other surface. The
 * body is read only after that: declared oversize is 413 at once, and a body that turns out
 * larger is cut off at the limit (413) before it is parsed. The hooks service does the rest.
 */
export async function hooksSurface(scope: FastifyInstance, deps: HooksHttpDeps): Promise<void> {
  const { hooks } = deps;
  const token = hooks.token;
  if (!hooks.enabled || token === undefined) return;
  const bodyLimit = hooks.maxBodyBytes;
  const call = { timeoutMs: deps.requestTimeoutMs };
  parseEveryBodyAsJson(scope, bodyLimit);
  scope.addHook("onRequest", hookAuthentication(deps, token));
  scope.addHook("onRequest", hookAdmission(hooks));

  scope.post("/wake", { bodyLimit }, async (request, reply) => {
    const body = parseBody(HookWakeBodySchema, request.body);
    const accepted = await callRpc(deps.bus, deps.subjects, RPC.hooksWake, { ...body, idempotencyKey: idempotencyKeyOf(request) }, call);
    return answer(reply, accepted);
  });

  scope.post("/agent", { bodyLimit }, async (request, reply) => {
    const body = parseBody(HookAgentBodySchema, request.body);
    const req = { ...body, idempotencyKey: idempotencyKeyOf(request) };
    return answer(reply, await callRpc(deps.bus, deps.subjects, RPC.hooksAgent, req, call));
  });

  scope.post("/*", { bodyLimit }, async (request, reply) => {
    const req = {
      path: (request.params as { "*": string })["*"],
      payloadJson: Buffer.from(JSON.stringify(request.body ?? {}), "utf8"),
      headers: forwardedHeaders(request),
      query: Object.fromEntries(queryOf(request)),
      idempotencyKey: idempotencyKeyOf(request),
    };
    return answer(reply, await callRpc(deps.bus, deps.subjects, RPC.hooksMapping, req, call));
  });
}
