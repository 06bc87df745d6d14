/**
 * BlueBubbles server (https://bluebubbles.app), the iMessage bridge on a Mac: every request
 * carries `?password=` (or `?guid=`); `POST /api/v1/message/text` `{ chatGuid, tempGuid,
 * message, method, selectedMessageGuid? }`, `POST /api/v1/message/attachment` (multipart with
 * `attachment`, `chatGuid`, `tempGuid`, `name`), `GET /api/v1/server/info`, `GET /api/v1/ping`.
 * Answers `{ status, message, data? }`, errors add `error: { type, message }`.
 *
 * The real server refuses a tempGuid that is still being sent ("already queued"); this fake
 * also remembers finished ones and answers a repeat with the first message, which is what a
 * retry after a lost response needs, so a plugin can rely on tempGuid as its dedupe key.
 * BlueBubbles has no rate limit of its own: a scripted 429 plays the reverse proxy in front.
 */
import { randomUUID } from "node:crypto";
import {
  bodyFields,
  type FakeMedia,
  type FakeReply,
  type FakeRequest,
  isFakeFile,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";

export interface FakeBlueBubblesServer {
  password: string;
  /** What the fake records as the sending account. */
  name: string;
  /** Whether the Private API helper is connected (replies need it). Default true. */
  privateApi?: boolean;
}

export interface FakeBlueBubbles extends PlatformFake {
  readonly servers: readonly FakeBlueBubblesServer[];
  /** Keeps a file a person sent, served at `GET /api/v1/attachment/<guid>/download`; answers its guid. */
  keepFile(data: Uint8Array, mimeType: string): string;
  /** The attachment guids downloaded, in order. */
  readonly fileDownloads: readonly string[];
}

export const DEFAULT_BLUEBUBBLES_SERVERS: readonly FakeBlueBubblesServer[] = [
  { password: "fake-bluebubbles-password-one", name: "mac-one" },
  { password: "fake-bluebubbles-password-two", name: "mac-two" },
];

type Params = Record<string, unknown>;
const CHAT_GUID = /^(iMessage|SMS|any);[-+];.+$/;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startFakeBlueBubbles(
  opts: { servers?: readonly FakeBlueBubblesServer[]; sendDelayMs?: number } = {},
): Promise<FakeBlueBubbles> {
  const servers = [...(opts.servers ?? DEFAULT_BLUEBUBBLES_SERVERS)];
  // tempGuid -> the message once sent, or "sending" while it is (keyed per server).
  const sends = new Map<string, Params | "sending">();
  let rowId = 1000;
  const files = new Map<string, { data: Uint8Array; mimeType: string }>();
  const fileDownloads: string[] = [];

  const route = async (req: FakeRequest, ctx: PlatformContext): Promise<FakeReply> => {
    const password = req.query.password ?? req.query.guid;
    const server = servers.find((s) => s.password === password);
    if (server === undefined) {
      return answer(401, "You are not authorized to access this resource", { error: { type: "Authentication Error", message: "Unauthorized" } });
    }
    if (req.method === "GET" && req.path === "/api/v1/ping") return answer(200, "Ping received!", { data: "pong" });
    if (req.method === "GET" && req.path === "/api/v1/server/info") return answer(200, "Success", { data: serverInfo(server) });
    const download = /^\/api\/v1\/attachment\/([^/]+)\/download$/.exec(req.path);
    if (req.method === "GET" && download !== null) {
      const file = files.get(decodeURIComponent(download[1]!));
      if (file === undefined) return answer(404, "Attachment does not exist!", { error: { type: "Database Error", message: "Not Found" } });
      fileDownloads.push(decodeURIComponent(download[1]!));
      return { status: 200, headers: { "content-type": file.mimeType }, bytes: file.data };
    }
    const kind = req.method === "POST" ? /^\/api\/v1\/message\/(text|attachment)$/.exec(req.path)?.[1] : undefined;
    if (kind === undefined) return answer(404, "The requested resource was not found", { error: { type: "Database Error", message: "Not Found" } });
    const fields = bodyFields(req);
    const invalid = validate(kind, fields, server);
    if (invalid !== undefined) return invalid;
    const chatGuid = String(fields.chatGuid);
    const tempGuid = typeof fields.tempGuid === "string" && fields.tempGuid !== "" ? fields.tempGuid : undefined;
    const key = tempGuid === undefined ? undefined : `${server.name}\n${tempGuid}`;
    const earlier = key === undefined ? undefined : sends.get(key);
    if (earlier === "sending") {
      return badRequest(kind === "text" ? `Message is already queued to be sent! (Temp GUID: ${tempGuid})` : "Attachment is already queued to be sent!");
    }
    if (earlier !== undefined) return answer(200, kind === "text" ? "Message sent!" : "Attachment sent!", { data: earlier });
    if (key !== undefined) sends.set(key, "sending");
    if (opts.sendDelayMs) await sleep(opts.sendDelayMs);
    if (!CHAT_GUID.test(chatGuid)) {
      if (key !== undefined) sends.delete(key);
      return answer(500, "Message Send Error", { error: { type: "iMessage Error", message: "Chat does not exist" } });
    }
    const file = fields.attachment;
    const text = kind === "text" ? String(fields.message ?? "") : undefined;
    const reply = typeof fields.selectedMessageGuid === "string" && fields.selectedMessageGuid !== "" ? fields.selectedMessageGuid : undefined;
    const guid = randomUUID().toUpperCase();
    const media: FakeMedia[] = isFakeFile(file) ? [{ data: file.data, filename: String(fields.name), contentType: file.contentType, kind: "attachment" }] : [];
    const data = messageData({ rowId: ++rowId, guid, chatGuid, text, media, reply, fields, tempGuid });
    if (key !== undefined) sends.set(key, data);
    ctx.deliver({
      id: guid,
      account: server.name,
      chat: chatGuid,
      ...(text ? { text } : {}),
      media,
      ...(reply === undefined ? {} : { threadId: reply }),
      ...(tempGuid === undefined ? {} : { clientKey: tempGuid }),
    });
    return answer(200, kind === "text" ? "Message sent!" : "Attachment sent!", { data });
  };

  const fake = await startPlatformFake({
    tellsRetryAfter: true,
    dedupesOnClientKey: true,
    wire: {
      route,
      reject: ({ status = 400, reason }) =>
        answer(status, "You've made a bad request! Please check your request params & body", { error: { type: "Validation Error", message: reason ?? "Bad Request" } }),
      rateLimit: ({ retryAfterSeconds }) => ({ status: 429, headers: { "retry-after": String(retryAfterSeconds) }, text: "Too Many Requests" }),
      unavailable: ({ status = 500 }) =>
        status === 500
          ? answer(500, "The server has encountered an error", { error: { type: "Server Error", message: "Server Error" } })
          : { status, text: "Bad Gateway" },
    },
  });
  const keepFile = (data: Uint8Array, mimeType: string) => {
    const guid = randomUUID().toUpperCase();
    files.set(guid, { data, mimeType });
    return guid;
  };
  return Object.assign(fake, { servers, keepFile, fileDownloads });
}

/** A sent message as the server serialises it (the fields a client reads). */
function messageData(m: {
  rowId: number;
  guid: string;
  chatGuid: string;
  text: string | undefined;
  media: FakeMedia[];
  reply: string | undefined;
  fields: Params;
  tempGuid: string | undefined;
}): Params {
  return {
    originalROWID: m.rowId,
    guid: m.guid,
    text: m.text ?? "",
    attributedBody: null,
    handle: null,
    handleId: 0,
    otherHandle: 0,
    attachments: m.media.map((a) => ({ guid: randomUUID().toUpperCase(), transferName: a.filename, mimeType: a.contentType || null, totalBytes: a.data?.length ?? 0 })),
    subject: typeof m.fields.subject === "string" ? m.fields.subject : null,
    error: 0,
    dateCreated: Date.now(),
    dateRead: null,
    dateDelivered: null,
    isFromMe: true,
    isDelivered: false,
    threadOriginatorGuid: m.reply ?? null,
    threadOriginatorPart: m.reply === undefined ? null : `${Number(m.fields.partIndex ?? 0)}:0:0`,
    chats: [{ guid: m.chatGuid, chatIdentifier: m.chatGuid.split(";").at(-1), style: m.chatGuid.includes(";+;") ? 43 : 45 }],
    ...(m.tempGuid === undefined ? {} : { tempGuid: m.tempGuid }),
  };
}

/** The server's own checks, in its order (MessageValidator). */
function validate(kind: string, fields: Params, server: FakeBlueBubblesServer): FakeReply | undefined {
  if (typeof fields.chatGuid !== "string" || fields.chatGuid === "") return badRequest("The chatGuid field is required.");
  if (fields.method !== undefined && fields.method !== "apple-script" && fields.method !== "private-api") {
    return badRequest("The selected method is invalid.");
  }
  const needsPrivateApi = ["effectId", "subject", "selectedMessageGuid"].some((k) => typeof fields[k] === "string" && fields[k] !== "");
  const method = needsPrivateApi ? "private-api" : (fields.method ?? "apple-script");
  if (method === "apple-script" && (typeof fields.tempGuid !== "string" || fields.tempGuid === "")) {
    return badRequest("A 'tempGuid' is required when sending via AppleScript");
  }
  if (kind === "text") {
    if (typeof fields.message !== "string") return badRequest("The message field must be present.");
    if (method === "apple-script" && fields.message === "") return badRequest("A 'message' is required when sending via AppleScript");
    if (method === "private-api" && fields.message === "" && !fields.subject) return badRequest("A 'message' or 'subject' is required when sending via the Private API");
  } else {
    if (typeof fields.name !== "string" || fields.name === "") return badRequest("The name field is required.");
    const file = fields.attachment;
    if (!isFakeFile(file) || file.data.length === 0) return badRequest("Attachment not provided or was empty!");
  }
  if (method === "private-api" && server.privateApi === false) {
    return answer(500, "Message Send Error", { error: { type: "iMessage Error", message: "iMessage Private API Helper is not connected!" } });
  }
  return undefined;
}

function serverInfo(server: FakeBlueBubblesServer): Params {
  return {
    computer_id: `fake-${server.name}`,
    os_version: "14.5",
    server_version: "1.9.9",
    private_api: server.privateApi !== false,
    proxy_service: "Dynamic DNS",
    helper_connected: server.privateApi !== false,
    detected_icloud: `${server.name}@icloud.com`,
    detected_imessage: `${server.name}@icloud.com`,
    macos_time_sync: null,
    local_ipv4s: ["127.0.0.1"],
    local_ipv6s: [],
  };
}

function answer(status: number, message: string, extra: Params = {}): FakeReply {
  return { status, json: { status, message, ...extra } };
}

function badRequest(error: string): FakeReply {
  return answer(400, "You've made a bad request! Please check your request params & body", { error: { type: "Validation Error", message: error } });
}
