/**
 * Signal recipients and reply anchors as signal-cli-rest-api takes them: a phone number in
 * E.164, an account UUID (what Signal shows instead of a hidden number), or a group id in the
 * bridge's `group.<base64>` form (the base64 of signal-cli's base64 group id, 32 bytes).
 */
import { ChannelError, E164 } from "@gw/channels";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const GROUP_PREFIX = "group.";
const GROUP_ID_BYTES = 32;

export function isSignalGroup(to: string): boolean {
  return to.startsWith(GROUP_PREFIX);
}

/** A person: `+15550001111` (spaces, dots, dashes and brackets dropped) or an account UUID. */
function person(text: string): string | undefined {
  if (text.startsWith("+")) {
    const phone = text.replace(/[\s().-]/g, "");
    return E164.test(phone) ? phone : undefined;
  }
  return UUID.test(text) ? text.toLowerCase() : undefined;
}

/** The bridge tells a group from a username by decoding twice to exactly 32 bytes; so do we. */
function isGroupId(text: string): boolean {
  const outer = text.slice(GROUP_PREFIX.length);
  if (outer === "" || !BASE64.test(outer)) return false;
  const inner = Buffer.from(outer, "base64").toString("latin1");
  return inner !== "" && BASE64.test(inner) && Buffer.from(inner, "base64").length === GROUP_ID_BYTES;
}

/** The recipient as the bridge wants it, or ChannelError "recipient". */
export function signalRecipient(to: string): string {
  const text = to.trim();
  if (isSignalGroup(text)) {
    if (isGroupId(text)) return text;
  } else {
    const found = person(text);
    if (found !== undefined) return found;
  }
  throw new ChannelError(
    "recipient",
    `"${to}" is not a Signal recipient: use an E.164 phone number (+15550001111), an account UUID or a group id (group.<base64>)`,
  );
}

export interface SignalQuote {
  /** The quoted message's timestamp: Signal's id of a message. */
  timestamp: number;
  /** Who wrote the quoted message: signal-cli needs it to find the message. */
  author: string;
}

/**
 * A reply anchor: `<timestamp>` or `<timestamp>:<author>`. signal-cli finds a quoted message by
 * its timestamp and author, so a bare timestamp is read as a message from the person this chat
 * is with (the usual case: answering what they wrote); in a group the author must be named.
 */
export function signalQuote(threadId: string, to: string): SignalQuote {
  const match = /^(\d{1,16})(?::(.+))?$/.exec(threadId.trim());
  const timestamp = Number(match?.[1]);
  if (match === null || !Number.isSafeInteger(timestamp) || timestamp <= 0) {
    throw new ChannelError("rejected", `threadId "${threadId}" is not a Signal message: use "<timestamp>" or "<timestamp>:<author>"`, {
      platformCode: "invalid_thread",
    });
  }
  const named = match[2];
  if (named === undefined) {
    if (isSignalGroup(to)) {
      throw new ChannelError("rejected", `a reply in a Signal group needs the quoted message's author: threadId "${timestamp}:<author>"`, {
        platformCode: "invalid_thread",
      });
    }
    return { timestamp, author: to };
  }
  const author = person(named.trim());
  if (author === undefined) {
    throw new ChannelError("rejected", `threadId "${threadId}": the author must be an E.164 phone number or an account UUID`, {
      platformCode: "invalid_thread",
    });
  }
  return { timestamp, author };
}
