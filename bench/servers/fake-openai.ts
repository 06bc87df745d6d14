// A local OpenAI-compatible upstream for benchmarks. POST /v1/chat/completions answers at once
// (model "zero": 8 chunks, no delay) or slowly (model "slow-<chunks>-<ms>": <chunks> chunks,
// <ms> apart), as SSE when `stream` is true and as one JSON object otherwise. Model
// "stamp-<chunks>-<ms>" streams like "slow", each chunk's text being `t<epoch ms> ` taken as it
// is written, so a client can tell how long a chunk took to reach it. Model "limited" answers 429
// with Retry-After: 600.
// Prints "listening <port>".
import { createServer, type ServerResponse } from "node:http";

function plan(model: string): { chunks: number; delayMs: number; stamp: boolean } {
  const slow = /^(slow|stamp)-(\d+)-(\d+)$/.exec(model);
  return slow
    ? { chunks: Number(slow[2]), delayMs: Number(slow[3]), stamp: slow[1] === "stamp" }
    : { chunks: 8, delayMs: 0, stamp: false };
}

const nowMs = () => (performance.timeOrigin + performance.now()).toFixed(3);

const chunkJson = (model: string, delta: Record<string, unknown>, finish: string | null) =>
  JSON.stringify({
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

async function stream(res: ServerResponse, model: string): Promise<void> {
  const { chunks, delayMs, stamp } = plan(model);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(`data: ${chunkJson(model, { role: "assistant" }, null)}\n\n`);
  for (let i = 0; i < chunks; i++) {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    res.write(`data: ${chunkJson(model, { content: stamp ? `t${nowMs()} ` : `word${i} ` }, null)}\n\n`);
  }
  res.write(`data: ${chunkJson(model, {}, "stop")}\n\n`);
  res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: chunks } })}\n\n`);
  res.end("data: [DONE]\n\n");
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => {
    body += chunk;
  });
  req.on("end", () => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(body) as { model?: string; stream?: boolean };
    const model = request.model ?? "zero";
    // Model "limited": a provider over its quota (429 for ten minutes), for the fallback bench.
    if (model === "limited") {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "600" }).end(JSON.stringify({ error: { message: "rate limited" } }));
      return;
    }
    if (request.stream) {
      stream(res, model).catch(() => res.destroy());
      return;
    }
    const { chunks } = plan(model);
    const text = Array.from({ length: chunks }, (_, i) => `word${i} `).join("");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-fake",
        object: "chat.completion",
        created: 0,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: chunks, total_tokens: chunks + 1 },
      }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
