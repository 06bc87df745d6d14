/**
 * The inbound half of the channel port: what a platform tells the gateway (a person wrote to
 * the bot), in platform-neutral terms. Webhook platforms answer raw HTTP requests the edge
 * forwards over the bus (`InboundEndpoint`); polling and gateway platforms are read by a
 * `ChannelReceiver` that delivery runs once per account across every replica. Either way the
 * messages land in delivery's inbound sink, which stores them durably before anything else.
 */

/**
 * A file sent with an inbound message, as the platform describes it. Where the plugin can fetch
 * it (`InboundFiles`) and the agent reads images, delivery downloads an image and the run
 * carries it; otherwise the agent reads this description. `url` is set only where the
 * platform's URL carries no credential of ours (a Telegram file URL holds the bot token, so
 * Telegram gives only its `file_id`).
 */
export interface InboundAttachment {
  /** image, video, audio, voice, document, sticker or file. */
  kind: string;
  /** The file's name, when the platform has one. */
  name?: string;
  mimeType?: string;
  /** Bytes, when the platform says. */
  size?: number;
  /** Where the platform serves it (Discord CDN, Slack `url_private`, which needs the bot token). */
  url?: string;
  /** The platform's id for it (Telegram file_id, WhatsApp media id, Signal or BlueBubbles attachment id). */
  id?: string;
}

/** A file a person sent, as `InboundFiles.fetch` read it; `too_large` past the bytes asked for. */
export type FetchedFile = { kind: "file"; bytes: Uint8Array; mimeType: string } | { kind: "too_large" };

/**
 * The platform's download of a file a person sent (by its `id` or `url`), so delivery can hand
 * an image to the agent: through the account's SSRF-guarded client, reading at most `maxBytes`.
 * Throws ChannelError when the platform fails or refuses.
 */
export interface InboundFiles {
  fetch(attachment: InboundAttachment, opts: { maxBytes: number; signal: AbortSignal }): Promise<FetchedFile>;
}

/** One message a person (or a bot) wrote, as delivery needs it. */
export interface InboundMessage {
  /**
   * The platform's id of this event or message, unique per account and stable across the
   * platform's retries (Telegram update_id, Slack event_id, Discord message id, WhatsApp wamid,
   * Signal timestamp+source, BlueBubbles guid): the dedupe key.
   */
  eventId: string;
  /** The chat to answer in, in the form `send`'s `to` takes for this platform. */
  chat: string;
  /** The thread or topic inside the chat, when the message is in one (answers go there too). */
  threadId?: string;
  /** The sender's platform id, in the form `allowFrom` lists (E.164 for phone numbers). */
  sender: string;
  /** How the platform names the sender, for the session's `sender` field. */
  senderName?: string;
  /** A one-to-one chat with the bot, or a group / channel / server. */
  chatType: "direct" | "group";
  /** Whether the message mentions the bot (or replies to it): groups answer only then by default. */
  mentioned: boolean;
  /** Written by a bot (this one included): never answered, so bots cannot loop. */
  fromBot: boolean;
  /** The text; mentions of the bot removed where the platform marks them. */
  text: string;
  /** Files that came with it, as the platform describes them. */
  attachments?: InboundAttachment[];
  /** When the platform says it was sent, epoch ms. */
  sentAt: number;
}

/** A platform's HTTP request as the edge received it (DESIGN §9: the edge forwards it raw). */
export interface RawInbound {
  method: string;
  /** Below the channel's route: `/webhook` for `/api/channels/<id>/webhook`; `/` for Slack's events. */
  path: string;
  query: Record<string, string>;
  /** Lowercased names. */
  headers: Record<string, string>;
  /** The body exactly as received: signatures are over these bytes. */
  body: Uint8Array;
}

/** What goes back to the platform, verbatim (Slack's url_verification, WhatsApp's hub.challenge). */
export interface InboundReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface InboundResult {
  reply: InboundReply;
  /** The messages the request carried (none for a handshake, a refused signature, a status update). */
  messages: InboundMessage[];
}

/**
 * A webhook endpoint of one account: verifies the request with the platform's secret or
 * signature and parses it. A request that fails verification gets a 401/403 reply and no
 * messages; a malformed one a 400. Never throws for bad input.
 */
export interface InboundEndpoint {
  handle(req: RawInbound): Promise<InboundResult>;
}

/** One batch a receiver read, and the cursor to resume after it once the batch is stored. */
export interface ReceivedBatch {
  messages: InboundMessage[];
  /** Opaque; stored durably by delivery after the batch is, handed back on the next start. */
  cursor: string;
}

/**
 * A long-lived reader of one account's messages (Telegram getUpdates, the Discord Gateway,
 * signal-cli's receive): delivery runs at most one per account across all replicas, resumes it
 * from the last stored cursor, and stops it through `signal`.
 */
export interface ChannelReceiver {
  receive(cursor: string | undefined, signal: AbortSignal): AsyncIterable<ReceivedBatch>;
}
