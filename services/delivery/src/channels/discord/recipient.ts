import { ChannelError } from "@gw/channels";

/**
 * A Discord recipient (DESIGN §7): `channel:<id>`, `user:<id>`, or a bare id, which is a channel
 * id that may turn out to be a user's (the plugin then tries a DM once).
 */
export type DiscordRecipient = { kind: "channel" | "user" | "bare"; id: string };

/** Snowflakes are 64-bit integers in decimal: 17-20 digits for every id issued since 2015. */
const SNOWFLAKE = /^\d{17,20}$/;

export function parseDiscordRecipient(to: string): DiscordRecipient {
  const trimmed = to.trim();
  const colon = trimmed.indexOf(":");
  const prefix = colon < 0 ? "" : trimmed.slice(0, colon).toLowerCase();
  const id = colon < 0 ? trimmed : trimmed.slice(colon + 1).trim();
  if (colon >= 0 && prefix !== "channel" && prefix !== "user") {
    throw new ChannelError("recipient", `a Discord recipient is channel:<id>, user:<id> or a bare channel id, not ${JSON.stringify(to)}`);
  }
  if (!SNOWFLAKE.test(id)) {
    throw new ChannelError("recipient", `a Discord id is a snowflake of 17-20 digits, not ${JSON.stringify(id)} (in ${JSON.stringify(to)})`);
  }
  return { kind: colon < 0 ? "bare" : (prefix as "channel" | "user"), id };
}

export function formatDiscordRecipient(recipient: DiscordRecipient): string {
  return recipient.kind === "bare" ? recipient.id : `${recipient.kind}:${recipient.id}`;
}
