/**
 * What every messaging-platform fake shares: a loopback HTTP server on port 0 that records each
 * request, keeps a log of what the "platform" accepted as messages, and can be scripted to
 * answer the next requests with the platform's own failure forms. Each platform supplies its
 * routes and how its failures look on the wire (fake-telegram.ts, fake-slack.ts, ...).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeFile {
  filename: string;
  contentType: string;
  data: Uint8Array;
}

export interface FakeRequest {
  method: string;
  /** The request path without the query string, as sent (still percent-encoded). */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /**
   * JSON bodies parsed; form bodies as field -> value; multipart as field -> value or FakeFile;
   * other text as a string; undefined when empty.
   */
  body: unknown;
  /** Set when the body did not parse as its content type says (e.g. "invalid JSON"). */
  bodyError?: string;
  /** Fires when the client goes away before the answer was written (long polls watch it). */
  signal?: AbortSignal;
  /** When the request had been read (epoch ms), to compare the times of calls. */
  receivedAt: number;
}

export interface FakeMedia {
  /** What the platform fetches itself (a URL it was given). */
  url?: string;
  /** What was uploaded to it. */
  data?: Uint8Array;
  filename?: string;
  contentType?: string;
  /** The platform's word for it: "photo", "document", "animation", "image", ... */
  kind?: string;
}

export interface FakePoll {
  question: string;
  options: string[];
  allowMultipleAnswers: boolean;
  anonymous: boolean;
}

/** One message as the platform stored it. */
export interface FakeDelivery {
  /** The id the platform answered with (what a receipt should carry). */
  id: string;
  /** Which account sent it: the bot id, sending number, phone-number id or server name. */
  account: string;
  /** The conversation it landed in, in the platform's own id form. */
  chat: string;
  text?: string;
  media: FakeMedia[];
  /** The thread, topic or replied-to message it belongs to. */
  threadId?: string;
  poll?: FakePoll;
  /** A client-chosen dedupe id the platform honours (BlueBubbles tempGuid, Discord nonce). */
  clientKey?: string;
}

/** How the next request is answered instead of normally. */
export type FakeStep =
  /** A permanent refusal in the platform's error form; `reason` replaces its default text. */
  | { kind: "reject"; status?: number; reason?: string }
  /**
   * The platform's 429, saying when to retry wherever the platform says it. `global`: the limit
   * of the whole bot rather than one route, where the platform tells them apart (Discord).
   */
  | { kind: "rate_limit"; retryAfterSeconds: number; global?: boolean }
  /** A 5xx (default per platform). */
  | { kind: "unavailable"; status?: number }
  /** Waits, then answers normally (timeouts and aborts). */
  | { kind: "delay"; ms: number }
  /** Cuts the connection without an answer. */
  | { kind: "drop" }
  | { kind: "raw"; status: number; headers?: Record<string, string>; body: string };

export interface FakeReply {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
  /** A binary body (a file download); the headers say its type. */
  bytes?: Uint8Array;
}

export interface PlatformContext {
  deliver(delivery: FakeDelivery): void;
  readonly delivered: readonly FakeDelivery[];
}

/** A platform's wire: its routes and its failure forms. */
export interface PlatformWire {
  route(req: FakeRequest, ctx: PlatformContext): FakeReply | Promise<FakeReply>;
  reject(step: Extract<FakeStep, { kind: "reject" }>, req: FakeRequest): FakeReply;
  rateLimit(step: Extract<FakeStep, { kind: "rate_limit" }>, req: FakeRequest): FakeReply;
  unavailable(step: Extract<FakeStep, { kind: "unavailable" }>, req: FakeRequest): FakeReply;
}

/** The controls every platform fake offers (the channel contract suite drives them). */
export interface PlatformFake {
  /** Where a plugin's configurable base URL points (`apiBaseUrl`, `bridgeUrl`). */
  readonly baseUrl: string;
  /** Every request received since the last reset, oldest first. */
  readonly requests: readonly FakeRequest[];
  /** Every message accepted since the last reset, oldest first. */
  readonly delivered: readonly FakeDelivery[];
  /** Whether this platform's 429 says how long to wait (header or body). */
  readonly tellsRetryAfter: boolean;
  /** Whether a repeated client dedupe id returns the first message instead of a second one. */
  readonly dedupesOnClientKey: boolean;
  /** Answers the next `times` requests (default 1) with `step`, in the order scripted. */
  next(step: FakeStep, times?: number): void;
  /** Forgets requests, deliveries and unused script steps; platform state (chats, ids) stays. */
  reset(): void;
  close(): Promise<void>;
}

export interface PlatformFakeOptions {
  wire: PlatformWire;
  /** Path prefix of the API (e.g. "/api/v10"), part of `baseUrl`. */
  basePath?: string;
  tellsRetryAfter: boolean;
  dedupesOnClientKey: boolean;
}

export async function startPlatformFake(opts: PlatformFakeOptions): Promise<PlatformFake> {
  const requests: FakeRequest[] = [];
  const delivered: FakeDelivery[] = [];
  const script: FakeStep[] = [];
  const pendingDelays = new Set<() => void>();
  const ctx: PlatformContext = { deliver: (d) => void delivered.push(d), delivered };

  const answer = async (req: FakeRequest, raw: IncomingMessage, res: ServerResponse): Promise<void> => {
    let gone = false;
    res.on("close", () => {
      if (!res.writableEnded) gone = true;
    });
    let step = script.shift();
    if (step?.kind === "delay") {
      const { ms } = step;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          pendingDelays.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        pendingDelays.add(done);
      });
      step = undefined;
      // The client gave up (timeout, abort): nothing is sent, as a request that never arrived.
      if (gone) return;
    }
    if (step?.kind === "drop") {
      raw.socket.destroy();
      return;
    }
    const reply = step === undefined ? await opts.wire.route(req, ctx) : scripted(opts.wire, step, req);
    write(res, reply);
  };

  const server = createServer((raw, res) => {
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableEnded) gone.abort();
    });
    void readRequest(raw)
      .then((req) => {
        req.signal = gone.signal;
        requests.push(req);
        return answer(req, raw, res);
      })
      .catch((err: unknown) => write(res, { status: 500, text: `fake platform failed: ${String(err)}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${opts.basePath ?? ""}`,
    requests,
    delivered,
    tellsRetryAfter: opts.tellsRetryAfter,
    dedupesOnClientKey: opts.dedupesOnClientKey,
    next(step, times = 1) {
      for (let i = 0; i < times; i++) script.push(step);
    },
    reset() {
      requests.length = 0;
      delivered.length = 0;
      script.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const release of [...pendingDelays]) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function scripted(wire: PlatformWire, step: Exclude<FakeStep, { kind: "delay" | "drop" }>, req: FakeRequest): FakeReply {
  switch (step.kind) {
    case "reject":
      return wire.reject(step, req);
    case "rate_limit":
      return wire.rateLimit(step, req);
    case "unavailable":
      return wire.unavailable(step, req);
    case "raw":
      return { status: step.status, headers: step.headers, text: step.body };
  }
}

function write(res: ServerResponse, reply: FakeReply): void {
  if (res.destroyed || res.headersSent) return;
  const headers: Record<string, string> = { ...reply.headers };
  let body: string | Uint8Array = reply.bytes ?? reply.text ?? "";
  if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    headers["content-type"] ??= "application/json; charset=utf-8";
  } else if (reply.text !== undefined) {
    headers["content-type"] ??= "text/plain; charset=utf-8";
  }
  res.writeHead(reply.status, headers).end(body);
}

async function readRequest(raw: IncomingMessage): Promise<FakeRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of raw) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  const url = new URL(raw.url ?? "/", "http://fake.invalid");
  const parsed = await parseBody(bytes, raw.headers["content-type"] ?? "");
  return {
    method: raw.method ?? "GET",
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: raw.headers,
    ...parsed,
    receivedAt: Date.now(),
  };
}

async function parseBody(bytes: Buffer, contentType: string): Promise<{ body: unknown; bodyError?: string }> {
  if (bytes.length === 0) return { body: undefined };
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "application/json") {
    try {
      return { body: JSON.parse(bytes.toString("utf8")) as unknown };
    } catch {
      return { body: bytes.toString("utf8"), bodyError: "invalid JSON" };
    }
  }
  if (type === "application/x-www-form-urlencoded") {
    return { body: Object.fromEntries(new URLSearchParams(bytes.toString("utf8"))) };
  }
  if (type === "multipart/form-data") {
    try {
      const form = await new Request("http://fake.invalid/", { method: "POST", headers: { "content-type": contentType }, body: bytes }).formData();
      const fields: Record<string, string | FakeFile> = {};
      for (const [name, value] of form) {
        fields[name] =
          typeof value === "string"
            ? value
            : { filename: value.name, contentType: value.type, data: new Uint8Array(await value.arrayBuffer()) };
      }
      return { body: fields };
    } catch {
      return { body: undefined, bodyError: "invalid multipart body" };
    }
  }
  return { body: bytes.toString("utf8") };
}

/** Fields of a JSON or form body, for platforms that accept both (Telegram, Slack). */
export function bodyFields(req: FakeRequest): Record<string, unknown> {
  const body = req.body;
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

export function isFakeFile(value: unknown): value is FakeFile {
  return typeof value === "object" && value !== null && (value as FakeFile).data instanceof Uint8Array;
}

/** The bearer credential of a request, if it has one. */
export function bearerToken(req: FakeRequest): string | undefined {
  const header = req.headers.authorization;
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return match?.[1];
}
