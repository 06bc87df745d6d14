import { COMMON_SETTINGS, httpUrl, nonEmpty } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind slack (DESIGN §7). */
export const SlackSettingsSchema = z.strictObject({
  ...COMMON_SETTINGS,
  botToken: nonEmpty("botToken"),
  signingSecret: nonEmpty("signingSecret").optional(),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://slack.com/api"),
});

export type SlackSettings = z.output<typeof SlackSettingsSchema>;
