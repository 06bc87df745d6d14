import { ChannelError, E164 } from "@gw/channels";

/** Separators people write numbers with: "+1 (555) 000-1111", "+49.30.1234567". */
const SEPARATORS = /[\s().-]/g;

/**
 * A WhatsApp recipient: a phone number in E.164, or WhatsApp's own `wa_id` form (the same
 * digits without '+', as inbound messages name senders). Normalised to E.164.
 */
export function normaliseWhatsAppRecipient(to: string): string {
  const compact = to.trim().replace(SEPARATORS, "");
  const e164 = /^\d+$/.test(compact) ? `+${compact}` : compact;
  if (!E164.test(e164)) {
    throw new ChannelError("recipient", `a WhatsApp recipient is a phone number in E.164 such as +15550001111, not ${JSON.stringify(to)}`);
  }
  return e164;
}

/** The Cloud API's `to`: the digits without '+'. */
export function waDigits(to: string): string {
  return normaliseWhatsAppRecipient(to).slice(1);
}
