import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { GatewayError } from "@gw/contracts";
import { z } from "zod";
import { guardedLookup, literalRefusal, type SsrfPolicy } from "./ssrf-guard.js";
import { defineTool, type ToolResult } from "./tool-registry.js";

export interface HttpFetchConfig extends SsrfPolicy {
  maxBytes: number;
  timeoutMs: number;
}

const MAX_REDIRECTS = 3;

function fetchOnce(url: URL, config: HttpFetchConfig, signal: AbortSignal): Promise<{ res: IncomingMessage; body: Buffer; truncated: boolean }> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const refused = literalRefusal(config, url.hostname);
  if (refused) return Promise.reject(refused);
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: "GET",
        headers: { "user-agent": "agent-gateway/http.fetch", accept: "*/*" },
        lookup: guardedLookup(config, url.hostname) as never,
        signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on("data", (chunk: Buffer) => {
          if (truncated) return;
          const room = config.maxBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            truncated = true;
            size = config.maxBytes;
            res.destroy();
            resolve({ res, body: Buffer.concat(chunks), truncated });
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on("end", () => resolve({ res, body: Buffer.concat(chunks), truncated }));
        res.on("error", (err) => (truncated ? undefined : reject(err)));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** GET a URL with SSRF protection (tools.httpFetch in the runner config), size and time limits. */
export function httpFetchTool(config: HttpFetchConfig) {
  return defineTool({
    name: "http.fetch",
    description: "Fetch a public http(s) URL with GET and return the response text (size-limited).",
    input: z.object({ url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }) }),
    run: async ({ url }, ctx): Promise<ToolResult> => {
      let target = new URL(url);
      for (let hop = 0; ; hop++) {
        let result: Awaited<ReturnType<typeof fetchOnce>>;
        try {
          result = await fetchOnce(target, config, ctx.signal);
        } catch (cause) {
          const err = cause as NodeJS.ErrnoException;
          const reason = err.name === "TimeoutError" || err.name === "AbortError" ? `no answer within ${config.timeoutMs} ms` : err.message;
          throw new GatewayError("INVALID_REQUEST", `http.fetch ${target.href}: ${reason}`, { cause });
        }
        const { res, body, truncated } = result;
        const location = res.headers.location;
        if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location && hop < MAX_REDIRECTS) {
          target = new URL(location, target);
          if (target.protocol !== "http:" && target.protocol !== "https:")
            throw new GatewayError("INVALID_REQUEST", `http.fetch: refusing a redirect to ${target.protocol}`);
          continue;
        }
        return {
          content: body.toString("utf8"),
          status: res.statusCode ?? 0,
          contentType: res.headers["content-type"] ?? "",
          url: target.href,
          truncated,
        };
      }
    },
  });
}
