// The floor of any relay written in Node: one HTTP request in, one HTTP request out to the
// platform, the platform's answer back. No auth, no idempotency, no bus, no store, no logging:
// what is left is the cost of the two HTTP hops themselves, on the same node:http server and the
// same undici client the gateway uses. The delivery benchmark measures it beside the gateway, so
// its ratio against direct calls shows how much of the gap any relay pays on this machine.
// Usage: bare-relay.ts <platform base URL> <bot token>. Prints "listening <port>".
import { createServer } from "node:http";
import { Agent } from "undici";

const [platform, token] = process.argv.slice(2);
if (!platform || !token) throw new Error("usage: bare-relay.ts <platform base URL> <bot token>");

const client = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
const target = new URL(`/bot${token}/sendMessage`, platform);

/** A `send` request frame's `to` and `message`, as POST /api/send takes them. */
function sendParams(raw: string): { to: string; message: string } {
  const frame = JSON.parse(raw) as { params?: { to?: unknown; message?: unknown } };
  const { to, message } = frame.params ?? {};
  if (typeof to !== "string" || typeof message !== "string") throw new Error("params.to and params.message are required");
  return { to, message };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const relay = async () => {
      try {
        const { to, message } = sendParams(Buffer.concat(chunks).toString("utf8"));
        const answer = await client.request({
          origin: target.origin,
          path: target.pathname,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ chat_id: to, text: message }),
        });
        const sent = (await answer.body.json()) as { result?: { message_id?: number } };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true, payload: { messageId: String(sent.result?.message_id ?? "") } }));
      } catch (err) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: { message: (err as Error).message } }));
      }
    };
    relay().catch((err: unknown) => console.error(err));
  });
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
