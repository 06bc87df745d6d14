// A Telegram Bot API stand-in for the inbound benchmark, in the benchmark's own process: it
// answers getMe, sendChatAction and sendMessage in the Bot API's wire format and tells the
// benchmark, as each sendMessage arrives, which chat it went to and when, so webhook-to-answer
// latency is measured where the platform would see the answer. (The @gw/testing fake keeps no
// arrival times and runs its checks per request; the figures here should be the gateway's.)
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface TelegramRecorder {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startTelegramRecorder(onMessage: (chat: string, atMs: number) => void): Promise<TelegramRecorder> {
  let nextId = 1;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.timeOrigin + performance.now();
      const method = /\/bot[^/]+\/(\w+)$/.exec(req.url ?? "")?.[1]?.toLowerCase();
      let params: Record<string, unknown> = {};
      try {
        params = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
      } catch {
        // not JSON: answered as Telegram answers a bad request below
      }
      const ok = (result: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, result }));
      if (method === "getme") return ok({ id: 100001, is_bot: true, first_name: "bench", username: "bench_bot" });
      if (method === "sendchataction") return ok(true);
      if (method === "sendmessage" && typeof params.text === "string") {
        onMessage(String(params.chat_id), at);
        return ok({ message_id: nextId++, chat: { id: Number(params.chat_id), type: "private" }, date: Math.floor(Date.now() / 1000), text: params.text });
      }
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ ok: false, error_code: 400, description: "Bad Request" }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
