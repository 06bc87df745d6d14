import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AuthGate, Principal } from "../auth/auth-gate.js";
import type { TrustedProxies } from "../auth/client-address.js";
import type { IdentityRoles } from "../auth/identity-roles.js";
import { normalizeIp, requestTarget } from "../auth/client-address.js";
import type { BusDeps } from "../bus-deps.js";
import { bearerCredential } from "./bearer.js";

export interface HttpDeps extends BusDeps {
  authGate: AuthGate;
  identityRoles: IdentityRoles;
  trustedProxies: TrustedProxies;
  isHealthy: () => boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * The `onRequest` hook of every authenticated route (SPEC §5 chain, failed-auth limiter). These
 * routes (/v1, /api/send, /api/tools/invoke) are operator surfaces that name any session or
 * channel, so a proxy's or overlay network's user needs control there (IdentityRoles).
 */
export function bearerAuth(deps: Pick<HttpDeps, "authGate" | "identityRoles" | "trustedProxies">) {
  return async (request: FastifyRequest) => {
    const peerIp = normalizeIp(request.socket.remoteAddress);
    const principal = await deps.authGate.authorize(
      {
        peerIp,
        host: requestTarget(request.raw.url, request.headers).host,
        headers: request.headers,
        credential: bearerCredential(request.headers.authorization),
      },
      deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers),
    );
    deps.identityRoles.assertOperator(principal);
    request.principal = principal;
  };
}

export function registerRoutes(app: FastifyInstance, deps: HttpDeps): void {
  // Liveness and readiness in one: 503 while the bus or a store is disconnected.
  app.get("/health", async (_request, reply) => {
    const healthy = deps.isHealthy();
    return reply.status(healthy ? 200 : 503).send({ ok: healthy, status: healthy ? "ok" : "degraded" });
  });
}
