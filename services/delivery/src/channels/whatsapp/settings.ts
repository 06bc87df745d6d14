import { COMMON_SETTINGS, httpUrl, nonEmpty, phoneAllowFrom } from "@gw/channels";
import { z } from "zod";

/** `channels.<id>` of kind whatsapp (DESIGN §7). */
export const WhatsAppSettingsSchema = z.strictObject({
  ...COMMON_SETTINGS,
  allowFrom: phoneAllowFrom('an E.164 phone number such as +15550001111 (or its wa_id digits, 15550001111), or "*"'),
  accessToken: nonEmpty("accessToken"),
  phoneNumberId: z.string().regex(/^\d+$/, "phoneNumberId must be the numeric id Meta assigned"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://graph.facebook.com/v21.0"),
  /** Verifies X-Hub-Signature-256 on inbound webhooks. */
  appSecret: nonEmpty("appSecret").optional(),
  /** Answers the webhook verification handshake (hub.verify_token). */
  verifyToken: nonEmpty("verifyToken").optional(),
});

export type WhatsAppSettings = z.output<typeof WhatsAppSettingsSchema>;
