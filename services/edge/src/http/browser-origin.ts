import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { requestTarget } from "../auth/client-address.js";
import type { OriginPolicy } from "../auth/origin-policy.js";

/** How long a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

function allowOrigin(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("access-control-allow-origin", request.headers.origin!);
  reply.header("vary", "Origin");
}

/**
 * Browser requests (they carry `Origin`) are answered only for allowed origins (DESIGN §10),
 * before any route or credential check runs: others get 403. Allowed origins get CORS headers
 * and their preflights answered, so a listed page can call the API with a bearer credential.
 * `/health` stays open to everyone, as SPEC §4.2 says.
 */
export function registerOriginCheck(app: FastifyInstance, policy: OriginPolicy): void {
  app.addHook("onRequest", async (request, reply) => {
    if (request.headers.origin === undefined) return;
    if (request.method === "GET" && request.url === "/health") return;
    policy.check(request.headers, requestTarget(request.raw.url, request.headers).authority);
    allowOrigin(request, reply);
    if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
      return reply
        .status(204)
        .header("access-control-allow-methods", "GET, POST, OPTIONS")
        .header("access-control-allow-headers", "authorization, content-type, x-gateway-token")
        .header("access-control-max-age", String(PREFLIGHT_MAX_AGE_SECONDS))
        .send();
    }
  });
}
