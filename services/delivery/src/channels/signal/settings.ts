import { COMMON_SETTINGS, E164, httpUrl, phoneAllowFrom } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind signal (DESIGN §7). */
export const SignalSettingsSchema = z.strictObject({
  ...COMMON_SETTINGS,
  allowFrom: phoneAllowFrom('an E.164 phone number such as +15550001111, a Signal account UUID, or "*"', { uuids: true }),
  /** signal-cli-rest-api. */
  bridgeUrl: httpUrl("bridgeUrl"),
  /** The registered account that sends, in E.164. */
  number: z.string().regex(E164, "number must be an E.164 phone number such as +15550001111"),
  /** Messages are read from the bridge's receive endpoint (one reader per number across replicas), or not at all. */
  inbound: z.enum(["receive", "off"]).default("receive"),
});

export type SignalSettings = z.output<typeof SignalSettingsSchema>;
