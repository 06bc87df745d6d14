/**
 * iMessage recipients as BlueBubbles addresses them: a chat GUID. A phone number (E.164) or an
 * e-mail address (an Apple ID) becomes the direct chat `iMessage;-;<address>`; a chat GUID is
 * taken as given, so groups (`iMessage;+;chat…`), SMS chats (`SMS;-;…`) and the `any;-;…`
 * chats macOS 26 creates can be named too.
 */
import { ChannelError, E164 } from "@gw/channels";

const CHAT_GUID = /^(?:iMessage|SMS|any);[-+];\S+$/;
const EMAIL = /^[^\s@;,]+@[^\s@;,]+\.[^\s@;,]+$/;

export function imessageChatGuid(to: string): string {
  const text = to.trim();
  if (CHAT_GUID.test(text)) return text;
  if (text.startsWith("+")) {
    const phone = text.replace(/[\s().-]/g, "");
    if (E164.test(phone)) return `iMessage;-;${phone}`;
  } else if (EMAIL.test(text)) {
    // Apple IDs are case-insensitive and Messages stores handles in lower case.
    return `iMessage;-;${text.toLowerCase()}`;
  }
  throw new ChannelError(
    "recipient",
    `"${to}" is not an iMessage recipient: use an E.164 phone number (+15550001111), an e-mail address or a chat GUID (iMessage;-;…)`,
  );
}
