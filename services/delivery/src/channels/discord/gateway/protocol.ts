/**
 * The Discord Gateway's wire (https://discord.com/developers/docs/events/gateway), v10 JSON:
 * op codes, the intents this plugin asks for, and what each close code means for the next
 * connection.
 */
import { z } from "zod";

export const GATEWAY_VERSION = "10";

export const OP = {
  dispatch: 0,
  heartbeat: 1,
  identify: 2,
  resume: 6,
  reconnect: 7,
  invalidSession: 9,
  hello: 10,
  heartbeatAck: 11,
} as const;

/**
 * GUILD_MESSAGES (1 << 9) and DIRECT_MESSAGES (1 << 12) for messages in servers and DMs, and the
 * privileged MESSAGE_CONTENT (1 << 15), without which guild messages arrive without their text
 * (except those that mention the bot). It must be switched on for the bot in the Developer Portal.
 */
export const INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

export const PayloadSchema = z.object({
  op: z.number().int(),
  d: z.unknown().optional(),
  s: z.number().int().nullish(),
  t: z.string().nullish(),
});
export type GatewayPayload = z.output<typeof PayloadSchema>;

export const HelloSchema = z.object({ heartbeat_interval: z.number().positive() });
export const ReadySchema = z.object({
  session_id: z.string().min(1),
  resume_gateway_url: z.string().min(1),
  user: z.object({ id: z.string(), username: z.string().optional() }),
});

/** How a closed connection goes on: resume the session, identify anew, or stop for good. */
export type CloseVerdict = { next: "resume" } | { next: "identify" } | { next: "fatal"; reason: string };

/**
 * Discord's close codes: 4004 (bad token) and 4010-4014 (shard or intents refused) cannot be
 * fixed by reconnecting; 4007 (invalid seq) and 4009 (session timed out) end the session; the
 * rest (network cuts, 4000 unknown error, 4008 rate limited, ...) allow a resume.
 */
export function closeVerdict(code: number): CloseVerdict {
  switch (code) {
    case 4004:
      return { next: "fatal", reason: "Discord refused the bot token (close 4004: authentication failed)" };
    case 4010:
    case 4011:
      return { next: "fatal", reason: `Discord wants this bot sharded (close ${code}), which this gateway does not do` };
    case 4012:
      return { next: "fatal", reason: "Discord refused the gateway version (close 4012)" };
    case 4013:
      return { next: "fatal", reason: "Discord refused the intents (close 4013: invalid intents)" };
    case 4014:
      return {
        next: "fatal",
        reason: "Discord refused a privileged intent (close 4014): switch on MESSAGE CONTENT for the bot in the Developer Portal",
      };
    case 4007:
    case 4009:
      return { next: "identify" };
    default:
      return { next: "resume" };
  }
}

/**
 * The close code this client uses when it leaves on its own (stop, zombie connection, RECONNECT):
 * anything but 1000/1001, which would end the session, so the next connection (on this replica
 * or the one that takes over) can still resume it.
 */
export const RESUMABLE_CLOSE = 4900;
