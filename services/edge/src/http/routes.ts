import type { FastifyInstance } from "fastify";
import type { BearerAuthDeps } from "../auth/bearer-auth.js";
import type { BusDeps } from "../bus-deps.js";

export interface HttpDeps extends BusDeps, BearerAuthDeps {
  isHealthy: () => boolean;
}

/** `/health`: liveness and readiness in one, 503 while the bus or a store is disconnected. */
export async function healthSurface(app: FastifyInstance, deps: Pick<HttpDeps, "isHealthy">): Promise<void> {
  app.get("/health", async (_request, reply) => {
    const healthy = deps.isHealthy();
    return reply.status(healthy ? 200 : 503).send({ ok: healthy, status: healthy ? "ok" : "degraded" });
  });
}
