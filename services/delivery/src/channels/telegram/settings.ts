import { COMMON_SETTINGS, httpUrl, nonEmpty } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind telegram (DESIGN §7). */
export const TelegramSettingsSchema = z
  .strictObject({
    ...COMMON_SETTINGS,
    botToken: nonEmpty("botToken"),
    apiBaseUrl: httpUrl("apiBaseUrl").default("https://api.telegram.org"),
    inbound: z.enum(["webhook", "polling", "off"]).optional(),
    /** Checked against X-Telegram-Bot-Api-Secret-Token on inbound webhooks. */
    webhookSecret: nonEmpty("webhookSecret").optional(),
  })
  .superRefine((settings, ctx) => {
    // A webhook without the secret would take updates from anyone who finds the URL.
    if (settings.inbound === "webhook" && settings.webhookSecret === undefined) {
      ctx.addIssue({ code: "custom", path: ["webhookSecret"], message: 'inbound "webhook" needs a webhookSecret (the secret_token given to setWebhook)' });
    }
  });

export type TelegramSettings = z.output<typeof TelegramSettingsSchema>;
