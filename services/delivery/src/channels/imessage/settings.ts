import { COMMON_SETTINGS, httpUrl, nonEmpty } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind imessage (DESIGN §7): a BlueBubbles server. */
export const IMessageSettingsSchema = z.strictObject({
  ...COMMON_SETTINGS,
  /** The BlueBubbles server. */
  bridgeUrl: httpUrl("bridgeUrl"),
  password: nonEmpty("password"),
  /**
   * Send through BlueBubbles' Private API helper instead of AppleScript (replies use it
   * whatever this says). Needs the helper installed; AppleScript cannot send to the `any;-;`
   * chats of macOS 26.
   */
  privateApi: z.boolean().default(false),
});

export type IMessageSettings = z.output<typeof IMessageSettingsSchema>;
