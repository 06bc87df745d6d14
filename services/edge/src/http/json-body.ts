import { exceedsJsonDepth, GatewayError, jsonDepthMessage } from "@gw/contracts";
import type { FastifyInstance } from "fastify";

/**
 * Fastify's JSON body parser (prototype-poisoning checks included), behind a nesting-depth
 * check on the raw text: a body nested deeper than MAX_JSON_DEPTH is a 400 before it is parsed,
 * instead of a stack overflow in whatever walks it next.
 */
export function registerDepthLimitedJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string;
    if (exceedsJsonDepth(text)) {
      done(new GatewayError("INVALID_REQUEST", `request body ${jsonDepthMessage()}`), undefined);
      return;
    }
    // fastify's default parser answers through `done` and returns nothing; its type allows a promise.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises
    parseJson(request, text, done);
  });
}
