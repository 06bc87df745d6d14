/**
 * The Discord Gateway (https://discord.com/developers/docs/events/gateway), v10 JSON, on a
 * loopback WebSocket. It speaks the real op codes: HELLO (10) with `heartbeat_interval`,
 * HEARTBEAT (1) / HEARTBEAT_ACK (11), IDENTIFY (2) -> READY with `session_id` and
 * `resume_gateway_url`, RESUME (6) -> the missed events and RESUMED, or INVALID_SESSION (9)
 * with d=false, RECONNECT (7), DISPATCH (0) with `s`. A bad token closes with 4004, a second
 * IDENTIFY with 4005, a payload before IDENTIFY with 4003. Sessions outlive their connection
 * (so they can be resumed) and keep the events they were sent; a resumed session moves to the
 * new connection. Controls let tests drop connections, refuse resumes and dispatch messages.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";

export interface FakeGatewayBot {
  token: string;
  id: string;
  username: string;
}

export interface GatewayStats {
  /** Sockets open now, and the most there ever were at once. */
  open: number;
  maxOpen: number;
  /** Every socket ever opened. */
  connections: number;
  identifies: number;
  /** RESUME payloads, and those that resumed (the others got INVALID_SESSION). */
  resumes: number;
  resumed: number;
  heartbeats: number;
  /** The `intents` of every IDENTIFY. */
  intents: number[];
  /** The `seq` of every RESUME. */
  resumeSeqs: number[];
}

/** What a person writes, dispatched as MESSAGE_CREATE. */
export interface GatewayMessage {
  /** Whose session gets it (default: the first bot). */
  bot?: string;
  /** A guild channel (with `guildId`) or a DM channel (without). */
  channelId: string;
  guildId?: string;
  author: { id: string; username: string; bot?: boolean; global_name?: string };
  content: string;
  /** Users the message mentions (the bot, for a mention). */
  mentions?: string[];
  /** The message it replies to, and that message's author. */
  replyTo?: { id: string; authorId: string };
  attachments?: Array<{ url: string; filename: string; contentType?: string; size?: number }>;
}

export interface FakeDiscordGateway {
  /** What `gatewayUrl` points at. */
  readonly url: string;
  readonly stats: GatewayStats;
  /** Dispatches MESSAGE_CREATE to the bot's sessions; returns the message id and each session's `s`. */
  userWrites(message: GatewayMessage): { id: string; seqs: number[] };
  /** Cuts every open socket without a close frame (the client sees 1006). */
  dropConnections(): void;
  /** While on, RESUME gets INVALID_SESSION (d=false), as for an expired session. */
  refuseResumes(refuse: boolean): void;
  /** Sends RECONNECT (op 7) on every open socket. */
  askToReconnect(): void;
  /** While off, heartbeats go unanswered (a zombie connection, as the client should notice). */
  ackHeartbeats(ack: boolean): void;
  /** Ids of sessions not yet invalidated. */
  sessions(): string[];
  close(): Promise<void>;
}

interface Session {
  id: string;
  bot: FakeGatewayBot;
  seq: number;
  /** Every dispatch, to replay to a RESUME from any `seq`. */
  events: Array<{ s: number; t: string; d: unknown }>;
  socket?: WebSocket;
}

interface Conn {
  socket: WebSocket;
  session?: Session;
}

const OP = { dispatch: 0, heartbeat: 1, identify: 2, resume: 6, reconnect: 7, invalidSession: 9, hello: 10, heartbeatAck: 11 } as const;

export async function startFakeDiscordGateway(opts: { bots: readonly FakeGatewayBot[]; heartbeatIntervalMs?: number }): Promise<FakeDiscordGateway> {
  const heartbeatInterval = opts.heartbeatIntervalMs ?? 41_250;
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stats: GatewayStats = { open: 0, maxOpen: 0, connections: 0, identifies: 0, resumes: 0, resumed: 0, heartbeats: 0, intents: [], resumeSeqs: [] };
  const sessions = new Map<string, Session>();
  const conns = new Set<Conn>();
  let refusing = false;
  let acking = true;
  let nextMessage = 1n;

  const send = (socket: WebSocket | undefined, payload: unknown) => {
    if (socket !== undefined && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload));
  };
  const dispatch = (session: Session, t: string, d: unknown): number => {
    const s = ++session.seq;
    session.events.push({ s, t, d });
    send(session.socket, { op: OP.dispatch, t, s, d });
    return s;
  };

  const onPayload = (conn: Conn, payload: { op?: unknown; d?: unknown }) => {
    const d = (payload.d ?? {}) as Record<string, unknown>;
    if (payload.op === OP.heartbeat) {
      stats.heartbeats += 1;
      if (acking) send(conn.socket, { op: OP.heartbeatAck });
      return;
    }
    if (payload.op === OP.identify) {
      stats.identifies += 1;
      if (conn.session !== undefined) return conn.socket.close(4005, "Already authenticated.");
      const bot = opts.bots.find((b) => b.token === d.token);
      if (bot === undefined) return conn.socket.close(4004, "Authentication failed.");
      stats.intents.push(Number(d.intents));
      const session: Session = { id: randomBytes(16).toString("hex"), bot, seq: 0, events: [], socket: conn.socket };
      sessions.set(session.id, session);
      conn.session = session;
      dispatch(session, "READY", {
        v: 10,
        user: { id: bot.id, username: bot.username, bot: true, discriminator: "0" },
        guilds: [],
        session_id: session.id,
        resume_gateway_url: url,
        application: { id: bot.id, flags: 0 },
      });
      return;
    }
    if (payload.op === OP.resume) {
      stats.resumes += 1;
      const seq = Number(d.seq);
      stats.resumeSeqs.push(seq);
      const session = sessions.get(String(d.session_id));
      if (refusing || session === undefined || session.bot.token !== d.token) {
        if (session !== undefined) sessions.delete(session.id);
        send(conn.socket, { op: OP.invalidSession, d: false });
        return;
      }
      // The session moves to this connection; the one it had (if still open) no longer gets it.
      session.socket = conn.socket;
      conn.session = session;
      stats.resumed += 1;
      for (const event of session.events.filter((e) => e.s > seq)) send(conn.socket, { op: OP.dispatch, ...event });
      dispatch(session, "RESUMED", null);
      return;
    }
    if (conn.session === undefined) conn.socket.close(4003, "Not authenticated.");
  };

  server.on("connection", (socket, request) => {
    const query = new URL(request.url ?? "/", url).searchParams;
    stats.connections += 1;
    stats.open += 1;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    const conn: Conn = { socket };
    conns.add(conn);
    socket.on("close", () => {
      stats.open -= 1;
      conns.delete(conn);
      if (conn.session?.socket === socket) conn.session.socket = undefined;
    });
    if (query.get("v") !== "10" || query.get("encoding") !== "json") {
      socket.close(4012, "Invalid API version.");
      return;
    }
    socket.on("message", (data) => {
      let payload: { op?: unknown; d?: unknown };
      try {
        payload = JSON.parse(String(data)) as typeof payload;
      } catch {
        socket.close(4002, "Error while decoding payload.");
        return;
      }
      onPayload(conn, payload);
    });
    send(socket, { op: OP.hello, d: { heartbeat_interval: heartbeatInterval } });
  });

  return {
    url,
    stats,
    userWrites(message) {
      const bot = message.bot === undefined ? opts.bots[0] : opts.bots.find((b) => b.token === message.bot);
      if (bot === undefined) throw new Error("userWrites: unknown bot");
      const id = String((BigInt(Date.now() - 1_420_070_400_000) << 22n) | nextMessage++);
      const users = [...(message.mentions ?? [])].map((uid) => (uid === bot.id ? { id: bot.id, username: bot.username, bot: true } : { id: uid, username: `user${uid}` }));
      const d = {
        id,
        channel_id: message.channelId,
        ...(message.guildId === undefined ? {} : { guild_id: message.guildId, member: { roles: [] } }),
        author: message.author,
        content: message.content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: users,
        mention_roles: [],
        attachments: (message.attachments ?? []).map((a, i) => ({ id: `${id}${i}`, filename: a.filename, url: a.url, proxy_url: a.url, size: a.size ?? 1, ...(a.contentType === undefined ? {} : { content_type: a.contentType }) })),
        embeds: [],
        pinned: false,
        type: message.replyTo === undefined ? 0 : 19,
        ...(message.replyTo === undefined
          ? {}
          : { message_reference: { message_id: message.replyTo.id, channel_id: message.channelId }, referenced_message: { id: message.replyTo.id, author: { id: message.replyTo.authorId } } }),
      };
      const seqs = [...sessions.values()].filter((s) => s.bot.token === bot.token).map((session) => dispatch(session, "MESSAGE_CREATE", d));
      return { id, seqs };
    },
    dropConnections() {
      for (const conn of conns) conn.socket.terminate();
    },
    refuseResumes(refuse) {
      refusing = refuse;
    },
    ackHeartbeats(ack) {
      acking = ack;
    },
    askToReconnect() {
      for (const conn of conns) send(conn.socket, { op: OP.reconnect, d: null });
    },
    sessions: () => [...sessions.keys()],
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of conns) conn.socket.terminate();
        server.close(() => resolve());
      }),
  };
}
