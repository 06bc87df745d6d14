import type { OutgoingHttpHeaders } from "node:http";
import type { FastifyReply } from "fastify";

/**
 * Takes the reply over for a server-sent-events stream. The headers fastify holds for the
 * reply (`x-request-id`, CORS) go out with the status line, which fastify no longer sends.
 */
export function openSse(reply: FastifyReply): void {
  reply.hijack();
  const held = Object.entries(reply.getHeaders()).filter(([, value]) => value !== undefined);
  reply.raw.writeHead(200, {
    ...(Object.fromEntries(held) as OutgoingHttpHeaders),
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
}

/** One `data:` event, with an `event:` line when named (the Responses API names them). */
export function writeSse(reply: FastifyReply, data: unknown, event?: string): void {
  const json = typeof data === "string" ? data : JSON.stringify(data);
  reply.raw.write(event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`);
}
