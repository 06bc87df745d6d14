import { callRpc } from "@gw/bus";
import { decodeJson, describeIssues, GatewayError, RPC, ToolResultSchema } from "@gw/contracts";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { bearerAuth } from "../auth/bearer-auth.js";
import type { HttpDeps } from "./routes.js";

export const ToolsInvokeBodySchema = z.object({
  tool: z.string({ error: "tool is required" }).min(1, "tool must not be empty").max(128),
  params: z.record(z.string(), z.unknown(), { error: "params must be an object" }).optional(),
});

/** SPEC §4.2 `POST /api/tools/invoke`: runs one tool on a runner and returns its result. */
export async function toolsInvokeSurface(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.post("/api/tools/invoke", { onRequest: bearerAuth(deps) }, async (request) => {
    const parsed = ToolsInvokeBodySchema.safeParse(request.body ?? {});
    if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "body"));
    const res = await callRpc(
      deps.bus,
      deps.subjects,
      RPC.toolsInvoke,
      { tool: parsed.data.tool, paramsJson: Buffer.from(JSON.stringify(parsed.data.params ?? {}), "utf8") },
      { timeoutMs: deps.requestTimeoutMs },
    );
    return { ok: true, result: decodeJson(res.resultJson, ToolResultSchema, "tool result on the bus") };
  });
}
