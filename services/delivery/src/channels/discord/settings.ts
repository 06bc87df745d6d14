import { COMMON_SETTINGS, httpUrl, nonEmpty } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind discord (DESIGN §7). */
export const DiscordSettingsSchema = z.strictObject({
  ...COMMON_SETTINGS,
  botToken: nonEmpty("botToken"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://discord.com/api/v10"),
  gatewayUrl: z
    .string()
    .refine((value) => /^wss?:\/\//.test(value), "gatewayUrl must be a ws(s) URL")
    .default("wss://gateway.discord.gg"),
  /** DMs and mentions arrive over the Gateway (one connection per bot across replicas), or not at all. */
  inbound: z.enum(["gateway", "off"]).default("gateway"),
});

export type DiscordSettings = z.output<typeof DiscordSettingsSchema>;
