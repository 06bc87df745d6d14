import { callRpc } from "@gw/bus";
import { GatewayError, RPC } from "@gw/contracts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { TrustedProxies } from "../auth/client-address.js";
import type { FailedAuthLimiter } from "../auth/failed-auth-limiter.js";
import type { BusDeps } from "../bus-deps.js";

export interface ChannelIngressDeps extends BusDeps {
  limiter: FailedAuthLimiter;
  trustedProxies: TrustedProxies;
  /** delivery.inbound.maxBodyBytes: the largest webhook body forwarded. */
  maxBodyBytes: number;
  /** delivery.inbound.timeoutMs: how long delivery may take to verify, store and answer. */
  timeoutMs: number;
}

const CHANNEL_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const ACCOUNT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Never forwarded: the gateway's own credentials are not the platform's business. */
const DROPPED_HEADERS = new Set(["authorization", "cookie", "x-gateway-token"]);
/** What a plugin's reply may set; hop-by-hop and framing headers are the edge's. */
const REPLY_HEADERS = new Set(["content-type", "cache-control", "retry-after"]);
// HEAD comes with GET (fastify exposes it for every GET route).
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Where a route below `/api/channels/<id>/` goes: `<accountId>/webhook` names an account. */
function target(rest: string): { accountId: string; path: string } {
  const segments = rest.split("/").filter((s) => s !== "");
  if (segments.length === 2 && segments[1] === "webhook" && ACCOUNT_ID.test(segments[0]!)) {
    return { accountId: segments[0]!, path: "/webhook" };
  }
  return { accountId: "", path: `/${segments.join("/")}` };
}

function headersOf(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function queryOf(url: string): Record<string, string> {
  const query: Record<string, string> = {};
  const search = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  for (const [key, value] of new URLSearchParams(search)) if (!(key in query)) query[key] = value;
  return query;
}

/**
 * Inbound channel webhooks (DESIGN §9, SPEC §4.2): `/api/channels/:channelId/*` (every method: some
 * platforms verify with a GET) and Slack's `POST /api/chatapp/events` go to delivery as raw
 * requests (method, path, query, headers, the body's exact bytes) over the bus, and delivery's
 * reply goes back verbatim. The platforms cannot send the gateway's bearer token: each plugin
 * checks the platform's own secret or signature, so the edge holds no platform secret and imports
 * no plugin. The edge applies the size limit, the deadline and the failed-auth limiter: a 401 or
 * 403 from delivery counts as a failed authentication of the client's IP, and a blocked IP is
 * refused before anything is forwarded.
 */
export async function channelIngressSurface(scope: FastifyInstance, deps: ChannelIngressDeps): Promise<void> {
  // The body stays bytes: signatures are computed over exactly what the platform sent.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: deps.maxBodyBytes }, (_request, body, done) => done(null, body));

  const forward = async (request: FastifyRequest, reply: FastifyReply, route: { channelId: string; accountId: string; path: string }) => {
    const clientIp = deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers);
    deps.limiter.assertAllowed(clientIp);
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const answer = await callRpc(
      deps.bus,
      deps.subjects,
      RPC.inboundHandle,
      { ...route, method: request.method, query: queryOf(request.url), headers: headersOf(request), body },
      { timeoutMs: deps.timeoutMs },
    );
    if (answer.status === 401 || answer.status === 403) await deps.limiter.recordFailure(clientIp);
    const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => REPLY_HEADERS.has(name.toLowerCase())));
    return reply.status(answer.status).headers(headers).send(Buffer.from(answer.body));
  };

  scope.route<{ Params: { channelId: string; "*": string } }>({
    method: [...METHODS],
    url: "/api/channels/:channelId/*",
    bodyLimit: deps.maxBodyBytes,
    handler: async (request, reply) => {
      const { channelId } = request.params;
      if (!CHANNEL_ID.test(channelId)) throw new GatewayError("NOT_FOUND", "no such channel route");
      return forward(request, reply, { channelId, ...target(request.params["*"]) });
    },
  });
  scope.post("/api/chatapp/events", { bodyLimit: deps.maxBodyBytes }, (request, reply) =>
    forward(request, reply, { channelId: "", accountId: "", path: "/" }),
  );
}
