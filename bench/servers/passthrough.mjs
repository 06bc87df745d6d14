// The floor a chat-completions gateway is measured against: fastify takes the request, an undici
// pool forwards the body to the upstream, and the answer streams back as it arrives. No auth, no
// session, no run, no events, no logging: what is left is what any Node relay of this API pays
// (the HTTP parser, one upstream request, the copy back). The chat-completions benchmark measures
// it in the same rounds as the gateway and the direct call.
// Plain JavaScript, so it runs without a TypeScript loader, as the gateway's build does.
// Usage: passthrough.mjs <upstream base URL>. Prints "listening <port>".
import Fastify from "fastify";
import { Pool } from "undici";

const upstream = process.argv[2];
if (!upstream) throw new Error("usage: passthrough.mjs <upstream base URL>");

// As many upstream connections as requests in flight, as the gateway's own client opens.
const pool = new Pool(new URL(upstream).origin, { keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

// The body is forwarded as it came: no JSON parse on the way through.
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_req, body, done) => done(null, body));

app.post("/v1/chat/completions", async (req, reply) => {
  const answer = await pool.request({
    path: "/v1/chat/completions",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: req.body,
  });
  const type = answer.headers["content-type"];
  void reply.code(answer.statusCode).header("content-type", typeof type === "string" ? type : "application/json");
  return reply.send(answer.body);
});

const address = await app.listen({ host: "127.0.0.1", port: 0 });
console.log(`listening ${new URL(address).port}`);
process.on("SIGTERM", () => {
  app.close().then(() => pool.close()).then(() => process.exit(0), () => process.exit(1));
});
