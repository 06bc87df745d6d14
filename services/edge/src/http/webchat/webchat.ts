import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebchatAsset } from "./gen/assets.js";

type Assets = Readonly<Record<string, WebchatAsset>>;

let loading: Promise<Assets> | undefined;

/**
 * The page's files, imported on the first request for one: about 1 MiB of heap (the module's
 * source and its string literals) that an edge whose page nobody opens would otherwise hold for
 * its whole life (docs/decisions.md, Runtime).
 */
function assets(): Promise<Assets> {
  loading ??= import("./gen/assets.js").then((module) => module.WEBCHAT_ASSETS);
  return loading;
}

/**
 * The page's own rules: its script, style and socket come from this edge only, nothing may frame
 * it (clickjacking), and it loads nothing from elsewhere. The socket still needs a credential
 * (DESIGN §10: a page is never loopback).
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function serve(request: FastifyRequest, reply: FastifyReply, asset: WebchatAsset) {
  reply
    .header("content-type", asset.contentType)
    .header("etag", asset.etag)
    // Revalidated on every load, so a new edge's page is never mixed with an old one's script.
    .header("cache-control", "no-cache")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer");
  if (asset.contentType.startsWith("text/html")) {
    reply
      .header("content-security-policy", PAGE_POLICY)
      .header("x-frame-options", "DENY")
      .header("cross-origin-opener-policy", "same-origin");
  }
  const tags = request.headers["if-none-match"];
  if (tags !== undefined && tags.split(",").some((tag) => tag.trim() === asset.etag)) return reply.status(304).send();
  return reply.send(asset.body);
}

/**
 * The web chat (DESIGN §3): a page at `/chat` that talks to this edge's WebSocket as a `webchat`
 * connection. `/` sends a browser there; a WebSocket upgrade on `/` is not a GET route and is
 * untouched. The files are built into the edge (scripts/gen-webchat.mjs), so every edge of a
 * deployment serves the same page with no files on disk.
 */
export async function webchatSurface(app: FastifyInstance): Promise<void> {
  app.get("/", (_request, reply) => reply.redirect("chat", 302));
  app.get("/chat", async (request, reply) => serve(request, reply, (await assets())["index.html"]!));
  app.get("/chat/", (_request, reply) => reply.redirect("../chat", 301));
  app.get<{ Params: { file: string } }>("/chat/:file", async (request, reply) => {
    const asset = request.params.file === "index.html" ? undefined : (await assets())[request.params.file];
    if (asset === undefined) return reply.callNotFound();
    return serve(request, reply, asset);
  });
}
