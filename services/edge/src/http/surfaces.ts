import type { GatewayConfig } from "@gw/config";
import type { FastifyInstance } from "fastify";
import type { FailedAuthLimiter } from "../auth/failed-auth-limiter.js";
import { apiSendSurface } from "./api-send.js";
import { channelIngressSurface } from "./channel-ingress.js";
import { hooksSurface } from "./hooks.js";
import type { OpenAiDeps } from "./openai/deps.js";
import { openaiSurface } from "./openai/plugin.js";
import { healthSurface, type HttpDeps } from "./routes.js";
import { toolsInvokeSurface } from "./tools-invoke.js";
import { webchatSurface } from "./webchat/webchat.js";

export interface SurfaceDeps {
  http: HttpDeps;
  config: GatewayConfig;
  limiter: FailedAuthLimiter;
  /** The OpenAI-compatible surface's own (runs, stored responses, agents). */
  openai: Omit<OpenAiDeps, keyof HttpDeps>;
  /** How long the edge waits for delivery's answer to a send. */
  sendTimeoutMs: number;
}

/**
 * Every HTTP surface of the edge, each an encapsulated fastify plugin: what one adds (a body
 * parser, an auth hook, a 404 of its own) stays inside it, and each inherits what the root holds
 * for all (http/http-server.ts). The WebSocket upgrade is not a fastify route (ws/ws-surface.ts).
 */
export function registerHttpSurfaces(app: FastifyInstance, deps: SurfaceDeps): void {
  const { http, config, limiter } = deps;
  const { trustedProxies } = http;
  void app.register(healthSurface, http);
  void app.register(webchatSurface);
  void app.register(openaiSurface, { prefix: "/v1", ...http, ...deps.openai });
  void app.register(toolsInvokeSurface, http);
  void app.register(apiSendSurface, { ...http, sendTimeoutMs: deps.sendTimeoutMs });
  void app.register(hooksSurface, { prefix: config.hooks.path, ...http, hooks: config.hooks, limiter, trustedProxies });
  void app.register(channelIngressSurface, {
    ...http,
    limiter,
    trustedProxies,
    maxBodyBytes: config.delivery.inbound.maxBodyBytes,
    timeoutMs: config.delivery.inbound.timeoutMs,
  });
}
