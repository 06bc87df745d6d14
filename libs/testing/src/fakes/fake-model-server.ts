import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicConversation, anthropicMaxChunks, writeAnthropicStream } from "./anthropic-wire.js";
import { type FakeTurn, planTurn } from "./fake-model-script.js";
import { openAiConversation, openAiStreamOptions, writeOpenAiStream } from "./openai-wire.js";

export interface RecordedRequest {
  api: "openai" | "anthropic";
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface FakeModelServer {
  /** OpenAI-style base URL (`…/v1`); the Anthropic adapter appends `/messages` to it. */
  baseUrl: string;
  requests: RecordedRequest[];
  /**
   * Fails on command: the next requests (of either API, whatever they say) take these turns in
   * order, e.g. `{ kind: "status", status: 429, retryAfter: "30" }`, `{ kind: "hang" }`,
   * `{ kind: "status", status: 503 }`, `{ kind: "drop", chunk }`; then the message steers again.
   */
  script(...turns: FakeTurn[]): void;
  /**
   * Holds every request from now on (each is recorded in `requests` at once, and answered only
   * after the release), so a test decides when a run's model call ends; the returned function
   * releases them all and stops holding.
   */
  hold(): () => void;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
}

/**
 * One local server speaking both the OpenAI chat-completions stream (usage in a last chunk
 * when `stream_options.include_usage` asks; a token limit cuts the answer)
 * (`POST /v1/chat/completions`) and the Anthropic Messages stream (`POST /v1/messages`),
 * steered by fake-model-script.ts. Listens on 127.0.0.1, port 0.
 */
export async function startFakeModelServer(): Promise<FakeModelServer> {
  const requests: RecordedRequest[] = [];
  const attempts = new Map<string, number>();
  const scripted: FakeTurn[] = [];
  let held: Promise<void> | undefined;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readJson(req);
      const api = req.url?.endsWith("/chat/completions") ? "openai" : req.url?.endsWith("/messages") ? "anthropic" : undefined;
      if (req.method !== "POST" || api === undefined) {
        res.writeHead(404).end();
        return;
      }
      requests.push({ api, headers: req.headers, body });
      if (held !== undefined) await held;
      const convo = api === "openai" ? openAiConversation(body as never) : anthropicConversation(body as never);
      const key = `${api}:${convo.lastUser}:${convo.toolResults.length}`;
      const attempt = attempts.get(key) ?? 0;
      attempts.set(key, attempt + 1);
      const turn = scripted.shift() ?? planTurn({ ...convo, attempt });
      if (turn.kind === "status") {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (turn.retryAfter !== undefined) headers["retry-after"] = turn.retryAfter;
        const credential = req.headers.authorization ?? req.headers["x-api-key"];
        const message = turn.echoCredential ? `invalid credential: ${String(credential)}` : `fake status ${turn.status}`;
        const error = api === "openai" ? { error: { message, type: "server_error" } } : { type: "error", error: { type: "api_error", message } };
        res.writeHead(turn.status, headers).end(JSON.stringify(error));
        return;
      }
      const model = String(body.model);
      if (api === "openai") await writeOpenAiStream(res, model, turn, openAiStreamOptions(body as never));
      else await writeAnthropicStream(res, model, turn, anthropicMaxChunks(body as never));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...turns) => {
      scripted.push(...turns);
    },
    hold: () => {
      let release = () => undefined as void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = gate;
      return () => {
        if (held === gate) held = undefined;
        release();
      };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
