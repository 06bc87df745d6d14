import { GatewayError } from "@gw/contracts";
import { createHttpClient, type SsrfPolicy } from "@gw/http-client";
import { z } from "zod";
import { defineTool, type ToolResult } from "./tool-registry.js";

export interface HttpFetchConfig extends SsrfPolicy {
  maxBytes: number;
  timeoutMs: number;
}

const MAX_REDIRECTS = 3;
const HEADERS = { "user-agent": "agent-gateway/http.fetch", accept: "*/*" };

/**
 * GET a URL with SSRF protection (tools.httpFetch in the runner config), size and time limits.
 * Any answer, an error status or a redirect past the limit too, is the tool's result: the
 * model reads it. Failures to get one (refused target, timeout, abort) are INVALID_REQUEST.
 */
export function httpFetchTool(config: HttpFetchConfig) {
  const http = createHttpClient({
    // Names the far side in the transport's messages: "cannot reach the server at …".
    name: "the server",
    ssrf: { allowHosts: config.allowHosts, allowPrivateNetworks: config.allowPrivateNetworks },
    timeoutMs: config.timeoutMs,
  });
  return defineTool({
    name: "http.fetch",
    description: "Fetch a public http(s) URL with GET and return the response text (size-limited).",
    input: z.object({ url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }) }),
    run: async ({ url }, ctx): Promise<ToolResult> => {
      try {
        const got = await http.download(url, {
          maxBytes: config.maxBytes,
          overflow: "truncate",
          maxRedirects: MAX_REDIRECTS,
          okStatus: () => true,
          headers: HEADERS,
          signal: ctx.signal,
        });
        const contentType = got.headers["content-type"];
        return {
          content: got.bytes.toString("utf8"),
          status: got.status,
          contentType: (Array.isArray(contentType) ? contentType[0] : contentType) ?? "",
          url: got.url,
          truncated: got.truncated,
        };
      } catch (cause) {
        const reason = ctx.signal.aborted ? "aborted" : http.scrub(cause instanceof Error ? cause.message : String(cause));
        throw new GatewayError("INVALID_REQUEST", `http.fetch: ${reason}`, { cause });
      }
    },
  });
}
