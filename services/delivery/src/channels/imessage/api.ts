/**
 * The BlueBubbles server wire (github.com/BlueBubblesApp/bluebubbles-server, api/http/api/v1):
 * every call carries the server password as `?password=`; `POST /api/v1/message/text`,
 * `POST /api/v1/message/attachment` (multipart), `GET /api/v1/server/info`. Answers are
 * `{ status, message, data }`, failures add `error: { type, message }`.
 */
import { ChannelError } from "@gw/channels";
import { type ErrorBodyHook, type HttpClient, HttpError } from "@gw/http-client";
import { z } from "zod";
import { bridgeChannelError } from "../bridge/bridge-errors.js";
import type { MediaFile } from "../bridge/bridge-media.js";

/** AppleScript drives Messages.app; the Private API helper can also reply to a message. */
export type SendMethod = "apple-script" | "private-api";

interface Common {
  chatGuid: string;
  /** BlueBubbles refuses a second send with a tempGuid that is still being sent. */
  tempGuid: string;
  method: SendMethod;
  /** The message this one replies to (needs the Private API). */
  selectedMessageGuid?: string;
}

export interface TextSend extends Common {
  message: string;
}

export interface AttachmentSend extends Common {
  file: MediaFile;
}

/** A sent message as the server serialises it; `error` is Messages' error code, 0 when sent. */
const Sent = z.object({
  data: z.object({ guid: z.string().min(1), error: z.number().nullish() }),
});

const ServerInfo = z.object({
  data: z.object({
    computer_id: z.string().nullish(),
    server_version: z.string().nullish(),
    private_api: z.boolean().nullish(),
    helper_connected: z.boolean().nullish(),
    detected_imessage: z.string().nullish(),
    detected_icloud: z.string().nullish(),
  }),
});

export type ServerInfo = z.output<typeof ServerInfo>["data"];

interface ErrorEnvelope {
  message?: unknown;
  error?: { type?: unknown; message?: unknown } | string;
  data?: { error?: unknown } | null;
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** `<error.type>: <error.message>`, plus Messages' error code when the server attached the message. */
export const blueBubblesErrorBody: ErrorBodyHook = ({ json }) => {
  if (json === null || typeof json !== "object") return undefined;
  const body = json as ErrorEnvelope;
  const error = typeof body.error === "object" && body.error !== null ? body.error : { message: body.error };
  const detail = text(error.message) ?? text(body.message);
  if (detail === undefined) return undefined;
  const code = typeof body.data?.error === "number" && body.data.error !== 0 ? ` (Messages error ${body.data.error})` : "";
  const type = text(error.type);
  return { message: `${type === undefined ? "" : `${type}: `}${detail}${code}` };
};

export class BlueBubblesApi {
  constructor(
    private readonly http: HttpClient,
    private readonly password: string,
  ) {}

  async sendText(send: TextSend, signal: AbortSignal): Promise<string> {
    return this.sent("/api/v1/message/text", { json: send }, signal);
  }

  async sendAttachment(send: AttachmentSend, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.append("attachment", new Blob([new Uint8Array(send.file.bytes)], { type: send.file.contentType }), send.file.filename);
    form.append("name", send.file.filename);
    form.append("chatGuid", send.chatGuid);
    form.append("tempGuid", send.tempGuid);
    form.append("method", send.method);
    if (send.selectedMessageGuid !== undefined) form.append("selectedMessageGuid", send.selectedMessageGuid);
    return this.sent("/api/v1/message/attachment", { multipart: form }, signal);
  }

  async serverInfo(signal: AbortSignal): Promise<ServerInfo> {
    const answer = await this.http.requestJson({ path: "/api/v1/server/info", query: { password: this.password }, signal, parse: (raw) => ServerInfo.parse(raw) });
    return answer.data.data;
  }

  private async sent(path: string, body: { json: unknown } | { multipart: FormData }, signal: AbortSignal): Promise<string> {
    let data: z.output<typeof Sent>["data"];
    try {
      const answer = await this.http.requestJson({ method: "POST", path, query: { password: this.password }, ...body, signal, parse: (raw) => Sent.parse(raw) });
      data = answer.data.data;
    } catch (err) {
      throw blueBubblesError(err);
    }
    // The attachment route answers a message Messages failed to send as a success.
    if (data.error) throw new ChannelError("rejected", `Messages could not send it (Messages error ${data.error})`, { platformCode: "iMessage Error" });
    return data.guid;
  }
}

/**
 * Besides the HTTP mapping: an "iMessage Error" (a 500) is Messages refusing after BlueBubbles'
 * own retry (no such chat, not on iMessage), so it is final; "already queued" means an earlier
 * try with this tempGuid is still being sent, so its outcome is not known yet and the call may
 * be made again later.
 */
function blueBubblesError(err: unknown): unknown {
  if (!(err instanceof HttpError) || err.kind !== "status") return bridgeChannelError(err);
  const type = errorType(err.body);
  const base = { cause: err, status: err.status, platformCode: type };
  if (err.status === 400 && /already queued/i.test(err.body ?? "")) {
    return new ChannelError("unavailable", `BlueBubbles is still sending an earlier try of this message: ${err.message}`, base);
  }
  if (type === "iMessage Error") return new ChannelError("rejected", err.message, base);
  return bridgeChannelError(err, { platformCode: type });
}

function errorType(body: string | undefined): string | undefined {
  try {
    const parsed = JSON.parse(body ?? "") as ErrorEnvelope;
    return typeof parsed.error === "object" && parsed.error !== null ? text(parsed.error.type) : undefined;
  } catch {
    return undefined;
  }
}
