import { callRpc } from "@gw/bus";
import { RPC } from "@gw/contracts";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AuthGate, Principal } from "../auth/auth-gate.js";
import type { TrustedProxies } from "../auth/client-address.js";
import { normalizeIp, requestTarget } from "../auth/client-address.js";
import type { BusDeps } from "../bus-deps.js";
import { bearerCredential } from "./bearer.js";

export interface HttpDeps extends BusDeps {
  authGate: AuthGate;
  trustedProxies: TrustedProxies;
  isHealthy: () => boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The `onRequest` hook of every authenticated route (SPEC §5 chain, failed-auth limiter). */
export function bearerAuth(deps: Pick<HttpDeps, "authGate" | "trustedProxies">) {
  return async (request: FastifyRequest) => {
    const peerIp = normalizeIp(request.socket.remoteAddress);
    request.principal = await deps.authGate.authorize(
      {
        peerIp,
        host: requestTarget(request.raw.url, request.headers).host,
        headers: request.headers,
        credential: bearerCredential(request.headers.authorization),
      },
      deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers),
    );
  };
}

export function registerRoutes(app: FastifyInstance, deps: HttpDeps): void {
  const requireAuth = bearerAuth(deps);

  // Liveness and readiness in one: 503 while the bus or a store is disconnected.
  app.get("/health", async (_request, reply) => {
    const healthy = deps.isHealthy();
    return reply.status(healthy ? 200 : 503).send({ ok: healthy, status: healthy ? "ok" : "degraded" });
  });

  // OpenAI-compatible model discovery: every agent is a model (decisions.md).
  app.get("/v1/models", { onRequest: requireAuth }, async () => {
    const res = await callRpc(
      deps.bus,
      deps.subjects,
      RPC.agentsList,
      {},
      { timeoutMs: deps.requestTimeoutMs },
    );
    return {
      object: "list",
      data: res.agents.map((agent) => ({
        id: agent.id,
        object: "model",
        created: 0,
        owned_by: "agent-gateway",
      })),
    };
  });
}
