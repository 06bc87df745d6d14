import { z } from "zod";

/**
 * Params of the methods an operator's tools call to see the whole deployment (the `gateway`
 * CLI's `status` and `runs list`, the web app's control view): control connections only.
 */

/** `runs.list`: the runs not yet final across every edge and runner, oldest first. */
export const RunsListParamsSchema = z.object({
  limit: z.number().int().min(1).max(1_000).default(100),
  /** Only this session's runs. */
  sessionKey: z.string().min(1).max(512).optional(),
  /** Only this agent's runs. */
  agentId: z.string().min(1).max(128).optional(),
});
export type RunsListParams = z.output<typeof RunsListParamsSchema>;

/** `gateway.status`: the edges seen, the services answering, the channels and the runs in flight. */
export const GatewayStatusParamsSchema = z.object({});

/** `models.status`: every model provider and API key with its cooldown (what runners route by). */
export const ModelsStatusParamsSchema = z.object({});
