import { z } from "zod";
import { SESSION_KEY_PREFIX } from "./session-key.js";

/** Params of the delivery methods (SPEC §4.1 `send`, `poll`, `channels.status`; §4.2 `/api/send`). */

/** Longest text one `send` takes; delivery splits it into platform-sized parts. */
export const SEND_MAX_TEXT = 65_536;
export const SEND_MAX_MEDIA = 10;
export const POLL_MAX_OPTIONS = 10;

/**
 * A channel id as a client names it: well-formed is the spelling of a session-key prefix (SPEC §2,
 * the same string). Whether it names a configured channel is delivery's to say, so `Telegram` is
 * CHANNEL_NOT_FOUND (SPEC §7), not INVALID_REQUEST (docs/decisions.md, Delivery).
 */
const ChannelIdSchema = z
  .string()
  .regex(SESSION_KEY_PREFIX, "channel must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit");

const MediaUrlSchema = z
  .string()
  .max(2_048)
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), "must be an http(s) URL");

/** The client's duplicate-send guard (SPEC §8): required, bounded, printable. */
export const IdempotencyKeySchema = z
  .string({ error: "idempotencyKey is required" })
  .min(1, "idempotencyKey must not be empty")
  .max(256)
  .regex(/^[\x21-\x7e]+$/, "idempotencyKey must be printable ASCII without spaces");

const common = {
  to: z.string({ error: "to is required" }).trim().min(1, "to must not be empty").max(256),
  channel: ChannelIdSchema.optional(),
  idempotencyKey: IdempotencyKeySchema,
  accountId: z.string().min(1).max(64).optional(),
  threadId: z.string().min(1).max(128).optional(),
  sessionKey: z.string().min(1).max(512).optional(),
};

export const SendParamsSchema = z
  .object({
    ...common,
    message: z.string().max(SEND_MAX_TEXT).optional(),
    mediaUrl: MediaUrlSchema.optional(),
    mediaUrls: z.array(MediaUrlSchema).max(SEND_MAX_MEDIA).optional(),
    gifPlayback: z.boolean().default(false),
  })
  .refine((p) => (p.message ?? "").trim() !== "" || p.mediaUrl !== undefined || (p.mediaUrls?.length ?? 0) > 0, {
    message: "give at least one of message, mediaUrl, mediaUrls",
  })
  .refine((p) => (p.mediaUrl === undefined ? 0 : 1) + (p.mediaUrls?.length ?? 0) <= SEND_MAX_MEDIA, {
    message: `at most ${SEND_MAX_MEDIA} media URLs per send`,
    path: ["mediaUrls"],
  });
export type SendParams = z.output<typeof SendParamsSchema>;

const PollOptionSchema = z.string().trim().min(1, "poll options must not be empty").max(100);

export const PollParamsSchema = z.object({
  ...common,
  question: z.string({ error: "question is required" }).trim().min(1, "question must not be empty").max(300),
  options: z
    .array(PollOptionSchema, { error: "options is required" })
    .min(2, "a poll needs at least two options")
    .max(POLL_MAX_OPTIONS, `a poll takes at most ${POLL_MAX_OPTIONS} options`),
  allowMultipleAnswers: z.boolean().default(false),
  anonymous: z.boolean().default(false),
});
export type PollParams = z.output<typeof PollParamsSchema>;

export const ChannelsStatusParamsSchema = z.object({
  /** Probe every account now instead of answering from the last probe. */
  probe: z.boolean().default(false),
});

/** `channels.pairing.list`: senders waiting for approval, of one channel or all. */
export const ChannelsPairingListParamsSchema = z.object({
  channel: ChannelIdSchema.optional(),
});

/** `channels.pairing.approve`: the code the bot sent to the sender. */
export const ChannelsPairingApproveParamsSchema = z.object({
  channel: ChannelIdSchema,
  code: z.string({ error: "code is required" }).trim().min(4, "code is too short").max(32),
  accountId: z.string().min(1).max(64).optional(),
});

/** `channels.pairing.reject`: the same code; the sender's request is dropped, not approved. */
export const ChannelsPairingRejectParamsSchema = ChannelsPairingApproveParamsSchema;

/** The `POST /api/send` body: the request-frame shape of SPEC §4.1 `send` (§4.2). */
export const ApiSendBodySchema = z.object({
  jsonrpc: z.literal("2.0").optional(),
  id: z.union([z.number(), z.string().max(128)]).optional(),
  method: z.literal("send", { error: 'method must be "send"' }).optional(),
  params: z.record(z.string(), z.unknown(), { error: "params must be an object" }),
});
