import { ChannelError, toE164 } from "@gw/channels";

/**
 * A WhatsApp recipient: a phone number in E.164, or WhatsApp's own `wa_id` form (the same
 * digits without '+', as inbound messages name senders). Normalised to E.164.
 */
export function normaliseWhatsAppRecipient(to: string): string {
  const e164 = toE164(to);
  if (e164 === undefined) {
    throw new ChannelError("recipient", `a WhatsApp recipient is a phone number in E.164 such as +15550001111, not ${JSON.stringify(to)}`);
  }
  return e164;
}

/** The Cloud API's `to`: the digits without '+'. */
export function waDigits(to: string): string {
  return normaliseWhatsAppRecipient(to).slice(1);
}
