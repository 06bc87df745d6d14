/**
 * The receiving side of the signal-cli-rest-api fake. In normal and native mode
 * `GET /v1/receive/{number}?timeout=<s>` runs `signal-cli receive`, which waits up to `timeout`
 * seconds for messages and answers every envelope it got as a JSON array of
 * `{ envelope, account }`; what it handed out is gone (signal-cli acknowledged it to Signal).
 * In json-rpc mode that path is a WebSocket only, and a plain GET fails the upgrade with 400.
 * `PUT`/`DELETE /v1/typing-indicator/{number}` `{ recipient }` show and hide "typing…" (204).
 */
import type { FakeReply, FakeRequest } from "./platform-fake.js";

export type SignalMode = "normal" | "native" | "json-rpc";

/** What a person writes, for `userWrites`. */
export interface SignalUserMessage {
  /** The bridge account it reaches (default: the first). */
  account?: string;
  /** The sender's number. */
  from: string;
  fromName?: string;
  text: string;
  /** signal-cli's (base64) internal id of a group the message was sent in. */
  groupId?: string;
  /** Mention these numbers (the account, for a mention of the bot): U+FFFC placeholders in the text. */
  mentions?: string[];
  /** Quote (reply to) a message the account sent. */
  quotesAccount?: boolean;
  /** Files sent with it, as signal-cli lists them (it stores each under its id; `data`, served at `/v1/attachments/<id>`). */
  attachments?: Array<{ id: string; contentType: string; filename?: string; size?: number; data?: Uint8Array }>;
}

export interface ReceiveStats {
  active: number;
  maxActive: number;
  calls: number;
}

export interface TypingCall {
  method: "PUT" | "DELETE";
  account: string;
  recipient: string;
}

export class SignalInbox {
  private readonly queued = new Map<string, unknown[]>();
  private readonly waiters = new Map<string, () => void>();
  readonly stats: ReceiveStats = { active: 0, maxActive: 0, calls: 0 };
  readonly typing: TypingCall[] = [];
  /** The stored files' bytes by id, and the ids fetched (in order). */
  private readonly files = new Map<string, { data: Uint8Array; contentType: string }>();
  readonly fetchedFiles: string[] = [];
  private last = 0;

  constructor(
    private readonly accounts: readonly string[],
    readonly mode: SignalMode,
  ) {}

  userWrites(msg: SignalUserMessage): { timestamp: number; envelope: unknown } {
    const account = msg.account ?? this.accounts[0]!;
    const timestamp = (this.last = Math.max(this.last + 1, Date.now()));
    for (const a of msg.attachments ?? []) if (a.data !== undefined) this.files.set(a.id, { data: a.data, contentType: a.contentType });
    const mentions = msg.mentions ?? [];
    const text = mentions.map(() => "\uFFFC ").join("") + msg.text;
    const dataMessage = {
      timestamp,
      message: text,
      expiresInSeconds: 0,
      viewOnce: false,
      ...(mentions.length > 0 ? { mentions: mentions.map((number, i) => ({ name: number, number, uuid: `uuid-${number}`, start: i * 2, length: 1 })) } : {}),
      ...(msg.attachments === undefined ? {} : { attachments: msg.attachments.map(({ data: _data, ...listed }) => listed) }),
      ...(msg.groupId === undefined ? {} : { groupInfo: { groupId: msg.groupId, groupName: "Fake group", revision: 1, type: "DELIVER" } }),
      ...(msg.quotesAccount ? { quote: { id: timestamp - 1, author: account, authorNumber: account, authorUuid: `uuid-${account}`, text: "earlier answer", attachments: [] } } : {}),
    };
    const envelope = {
      envelope: {
        source: msg.from,
        sourceNumber: msg.from,
        sourceUuid: `uuid-${msg.from}`,
        sourceName: msg.fromName ?? "Signal Person",
        sourceDevice: 1,
        timestamp,
        serverReceivedTimestamp: timestamp + 5,
        serverDeliveredTimestamp: timestamp + 9,
        dataMessage,
      },
      account,
    };
    this.queue(account, envelope);
    return { timestamp, envelope };
  }

  /** Any envelope, as signal-cli prints it (receipts, typing, sync messages). */
  queue(account: string, envelope: unknown): void {
    const list = this.queued.get(account) ?? [];
    list.push(envelope);
    this.queued.set(account, list);
    this.waiters.get(account)?.();
  }

  /** `GET /v1/attachments/<id>`: a stored file's bytes, as signal-cli-rest-api serves them. */
  private attachment(id: string): FakeReply {
    const file = this.files.get(id);
    if (file === undefined) return { status: 400, json: { error: "Couldn't find attachment" } };
    this.fetchedFiles.push(id);
    return { status: 200, headers: { "content-type": file.contentType }, bytes: file.data };
  }

  route(req: FakeRequest, checkSender: (number: string) => string | undefined): FakeReply | Promise<FakeReply> | undefined {
    const receive = /^\/v1\/receive\/([^/]+)$/.exec(req.path);
    if (req.method === "GET" && receive !== null) return this.receive(decodeURIComponent(receive[1]!), req, checkSender);
    const file = /^\/v1\/attachments\/([^/]+)$/.exec(req.path);
    if (req.method === "GET" && file !== null) return this.attachment(decodeURIComponent(file[1]!));
    const typing = /^\/v1\/typing-indicator\/([^/]+)$/.exec(req.path);
    if ((req.method === "PUT" || req.method === "DELETE") && typing !== null) {
      const account = decodeURIComponent(typing[1]!);
      const recipient = (req.body as { recipient?: unknown } | undefined)?.recipient;
      if (typeof recipient !== "string" || recipient === "") return { status: 400, json: { error: "Couldn't process request - invalid request" } };
      const problem = checkSender(account);
      if (problem !== undefined) return { status: 400, json: { error: problem } };
      this.typing.push({ method: req.method, account, recipient });
      return { status: 204 };
    }
    return undefined;
  }

  private async receive(account: string, req: FakeRequest, checkSender: (number: string) => string | undefined): Promise<FakeReply> {
    if (this.mode === "json-rpc") {
      return { status: 400, text: "Bad Request\nwebsocket: the client is not using the websocket protocol: 'upgrade' token not found in 'Connection' header" };
    }
    const timeout = Number(req.query.timeout ?? "1");
    if (!Number.isInteger(timeout)) return { status: 400, json: { error: "Couldn't process request - timeout needs to be numeric!" } };
    const problem = checkSender(account);
    if (problem !== undefined) return { status: 400, json: { error: problem } };
    this.stats.calls += 1;
    this.stats.active += 1;
    this.stats.maxActive = Math.max(this.stats.maxActive, this.stats.active);
    try {
      if ((this.queued.get(account) ?? []).length === 0 && timeout > 0) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            req.signal?.removeEventListener("abort", done);
            if (this.waiters.get(account) === done) this.waiters.delete(account);
            resolve();
          };
          const timer = setTimeout(done, timeout * 1000);
          req.signal?.addEventListener("abort", done, { once: true });
          this.waiters.set(account, done);
        });
      }
      // A client that went away gets nothing, and nothing is taken from the queue for it.
      if (req.signal?.aborted) return { status: 200, json: [] };
      const envelopes = this.queued.get(account) ?? [];
      this.queued.set(account, []);
      return { status: 200, json: envelopes };
    } finally {
      this.stats.active -= 1;
    }
  }
}
