import { callRpc } from "@gw/bus";
import { ApiSendBodySchema, describeIssues, GatewayError, RPC, SendParamsSchema } from "@gw/contracts";
import type { FastifyInstance } from "fastify";
import { receiptPayload, sendRequest } from "../methods/delivery.js";
import { bearerAuth } from "../auth/bearer-auth.js";
import type { HttpDeps } from "./routes.js";

/**
 * SPEC §4.2 `POST /api/send`: the `send` request frame over HTTP with a bearer credential.
 * The answer is the response frame (`id`, `ok`, `payload`, `meta`); errors are the SPEC §7
 * HTTP error body with the catalogue's status (docs/decisions.md, Delivery).
 */
export async function apiSendSurface(app: FastifyInstance, deps: HttpDeps & { sendTimeoutMs: number }): Promise<void> {
  app.post("/api/send", { onRequest: bearerAuth(deps) }, async (request) => {
    const envelope = ApiSendBodySchema.safeParse(request.body ?? {});
    if (!envelope.success) {
      throw new GatewayError("INVALID_REQUEST", describeIssues(envelope.error, "body"));
    }
    const params = SendParamsSchema.safeParse(envelope.data.params);
    if (!params.success) {
      throw new GatewayError("INVALID_REQUEST", describeIssues(params.error, "body.params"));
    }
    const receipt = await callRpc(deps.bus, deps.subjects, RPC.deliverySend, sendRequest(params.data), {
      timeoutMs: deps.sendTimeoutMs,
    });
    const { payload, meta } = receiptPayload(receipt);
    return { id: envelope.data.id ?? null, ok: true, payload, ...(meta === undefined ? {} : { meta }) };
  });
}
