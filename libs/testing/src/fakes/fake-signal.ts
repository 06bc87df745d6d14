/**
 * signal-cli-rest-api (https://github.com/bbernhard/signal-cli-rest-api), the HTTP bridge in
 * front of signal-cli: `POST /v2/send` `{ message, number, recipients, base64_attachments,
 * quote_timestamp, quote_author }` -> 201 `{ timestamp }` (a quote needs both quote fields);
 * `POST /v1/polls/{number}`; `GET /v1/about`, `/v1/accounts`, `/v1/health`. Errors are
 * `{ error }`, mostly with status 400; a rate limit is 429 with challenge tokens and no hint of
 * how long to wait.
 */
import { randomUUID } from "node:crypto";
import {
  bodyFields,
  type FakeMedia,
  type FakeReply,
  type FakeRequest,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";
import { type ReceiveStats, SignalInbox, type SignalMode, type SignalUserMessage, type TypingCall } from "./fake-signal-receive.js";

export interface FakeSignal extends PlatformFake {
  /** Numbers registered with the bridge (the `number` a send must name). */
  readonly accounts: readonly string[];
  /** Recipients the Signal service does not know. */
  readonly unregistered: readonly string[];
  /** A person writes to an account: queued for `GET /v1/receive` (fake-signal-receive.ts). */
  userWrites(msg: SignalUserMessage): { timestamp: number; envelope: unknown };
  readonly receiveStats: ReceiveStats;
  /** Every typing-indicator call, in order. */
  readonly typing: readonly TypingCall[];
  /** The attachment ids fetched (`GET /v1/attachments/<id>`), in order. */
  readonly fetchedFiles: readonly string[];
}

export const DEFAULT_SIGNAL_ACCOUNTS: readonly string[] = ["+15550001111", "+15550002222"];

const RECIPIENT = /^(\+[1-9]\d{6,14}|group\.[A-Za-z0-9+/=]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|u:[\w.]+)$/;

export async function startFakeSignal(
  opts: { accounts?: readonly string[]; unregistered?: readonly string[]; mode?: SignalMode } = {},
): Promise<FakeSignal> {
  const accounts = [...(opts.accounts ?? DEFAULT_SIGNAL_ACCOUNTS)];
  const mode = opts.mode ?? "json-rpc";
  const inbox = new SignalInbox(accounts, mode);
  const unregistered = [...(opts.unregistered ?? ["+15550009999"])];
  let last = 0;
  // Signal names a message by its sender's timestamp in milliseconds.
  const timestamp = () => (last = Math.max(last + 1, Date.now()));

  const route = (req: FakeRequest, ctx: PlatformContext): FakeReply | Promise<FakeReply> => {
    if (req.method === "GET" && req.path === "/v1/about") {
      return { status: 200, json: { versions: ["v1", "v2"], build: 2, mode, version: "0.95", capabilities: { "v2/send": ["quotes", "mentions"] } } };
    }
    const inbound = inbox.route(req, checkSender);
    if (inbound !== undefined) return inbound;
    if (req.method === "GET" && req.path === "/v1/health") return { status: 204 };
    if (req.method === "GET" && req.path === "/v1/accounts") return { status: 200, json: accounts };
    if (req.method === "POST" && req.path === "/v2/send") return send(req, ctx);
    const poll = /^\/v1\/polls\/([^/]+)$/.exec(req.path);
    if (req.method === "POST" && poll !== null) return createPoll(decodeURIComponent(poll[1]!), req, ctx);
    return { status: 404, text: "404 page not found" };
  };

  const send = (req: FakeRequest, ctx: PlatformContext): FakeReply => {
    if (req.bodyError !== undefined || typeof req.body !== "object") return refuse("Couldn't process request - invalid request");
    const body = bodyFields(req);
    const recipients = [...(Array.isArray(body.recipients) ? body.recipients : []), ...(typeof body.recipient === "string" && body.recipient ? [body.recipient] : [])].map(String);
    if (recipients.length === 0) return refuse("Couldn't process request - please provide at least one recipient");
    const number = typeof body.number === "string" ? body.number : "";
    if (number === "") return refuse("Couldn't process request - please provide a valid number");
    const problem = checkSender(number) ?? checkRecipients(recipients);
    if (problem !== undefined) return refuse(problem);
    const media: FakeMedia[] = [];
    for (const item of Array.isArray(body.base64_attachments) ? body.base64_attachments : []) {
      const decoded = decodeAttachment(String(item));
      if (decoded === undefined) return refuse("Couldn't process request - invalid base64 attachment");
      media.push(decoded);
    }
    const message = typeof body.message === "string" ? body.message : "";
    if (message === "" && media.length === 0) return refuse("Failed to send message: message is empty");
    const quote = body.quote_timestamp;
    // signal-cli finds the quoted message by timestamp and author (SendCommand).
    if (quote !== undefined && (typeof body.quote_author !== "string" || body.quote_author === "")) {
      return refuse("Quote author parameter is missing");
    }
    const sent = timestamp();
    for (const chat of recipients) {
      ctx.deliver({
        id: String(sent),
        account: number,
        chat,
        ...(message === "" ? {} : { text: message }),
        media,
        ...(typeof quote === "number" ? { threadId: String(quote) } : {}),
      });
    }
    return { status: 201, json: { timestamp: String(sent) } };
  };

  const createPoll = (number: string, req: FakeRequest, ctx: PlatformContext): FakeReply => {
    if (req.bodyError !== undefined) return refuse("Couldn't process request - invalid request");
    const body = bodyFields(req);
    const recipient = typeof body.recipient === "string" ? body.recipient : "";
    if (recipient === "") return refuse("Couldn't process request - recipient missing");
    const question = typeof body.question === "string" ? body.question : "";
    if (question === "") return refuse("Couldn't process request - question missing");
    const answers = Array.isArray(body.answers) ? body.answers.map(String) : [];
    if (answers.length === 0) return refuse("Couldn't process request - answers missing");
    const problem = checkSender(number) ?? checkRecipients([recipient]);
    if (problem !== undefined) return refuse(problem);
    const multiple = typeof body.allow_multiple_selections === "boolean" ? body.allow_multiple_selections : true;
    const sent = timestamp();
    // Signal polls always show who voted.
    ctx.deliver({ id: String(sent), account: number, chat: recipient, media: [], poll: { question, options: answers, allowMultipleAnswers: multiple, anonymous: false } });
    return { status: 201, json: { timestamp: String(sent) } };
  };

  const checkSender = (number: string): string | undefined =>
    accounts.includes(number) ? undefined : `User ${number} is not registered.`;

  const checkRecipients = (recipients: string[]): string | undefined => {
    const bad = recipients.find((r) => !RECIPIENT.test(r));
    if (bad !== undefined) return `Failed to send message: Invalid recipient "${bad}"`;
    const unknown = recipients.find((r) => unregistered.includes(r));
    return unknown === undefined ? undefined : `Failed to send message: Unregistered user "${unknown}"`;
  };

  const fake = await startPlatformFake({
    tellsRetryAfter: false,
    dedupesOnClientKey: false,
    wire: {
      route,
      reject: ({ status = 400, reason }) => ({ status, json: { error: reason ?? "Failed to send message: Unregistered user" } }),
      rateLimit: (_step, req) => ({
        status: 429,
        json: {
          error: "Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate limit restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.",
          challenge_tokens: [randomUUID()],
          account: String(bodyFields(req).number ?? ""),
        },
      }),
      unavailable: ({ status = 500 }) =>
        status === 500 ? { status, json: { error: "signal-cli: connection to daemon lost" } } : { status, text: "Bad Gateway" },
    },
  });
  return Object.assign(fake, {
    accounts,
    unregistered,
    userWrites: (msg: SignalUserMessage) => inbox.userWrites(msg),
    receiveStats: inbox.stats,
    typing: inbox.typing,
    fetchedFiles: inbox.fetchedFiles,
  });
}

/** `data:<mime>;filename=<name>;base64,<data>`, `data:<mime>;base64,<data>`, or bare base64. */
function decodeAttachment(item: string): FakeMedia | undefined {
  const uri = /^data:([^;,]+)((?:;[^;,=]+=[^;,]*)*);base64,(.*)$/s.exec(item);
  const payload = uri === null ? item : uri[3]!;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length === 0) return undefined;
  const filename = uri?.[2] ? /;filename=([^;]*)/.exec(uri[2])?.[1] : undefined;
  return {
    data: new Uint8Array(Buffer.from(payload, "base64")),
    kind: "attachment",
    ...(uri === null ? {} : { contentType: uri[1] }),
    ...(filename === undefined ? {} : { filename }),
  };
}

function refuse(error: string): FakeReply {
  return { status: 400, json: { error } };
}
