import { createSecretScrubber, REDACTED } from "@gw/runtime";

/** `scheme://user:password@host`: the credentials part of any URL in the text. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
/** Telegram puts the bot token in the path: `/bot123456:AAE…/sendMessage`. */
const BOT_TOKEN_SEGMENT = /(\/bot)\d+:[\w-]+/g;
/** Query parameters that carry credentials on the APIs we call (Graph's access_token, keys, signatures). */
const SECRET_QUERY = /([?&](?:access_token|api_key|apikey|key|token|secret|client_secret|password|sig|signature)=)[^&#\s"']+/gi;

export type Scrubber = (text: string) => string;

/**
 * Removes what must not leave the process in an error message or body excerpt: every configured
 * secret (also as it appears JSON- or URL-encoded), the credentials of any URL, Telegram-style
 * `bot<token>` path segments and credential query parameters.
 */
export function createScrubber(secrets: readonly string[] = []): Scrubber {
  const spellings = new Set<string>();
  for (const secret of secrets) {
    spellings.add(secret);
    spellings.add(encodeURIComponent(secret));
  }
  const scrubSecrets = createSecretScrubber([...spellings]);
  return (text) =>
    scrubSecrets(text)
      .replace(URL_CREDENTIALS, `$1${REDACTED}@`)
      .replace(BOT_TOKEN_SEGMENT, `$1${REDACTED}`)
      .replace(SECRET_QUERY, `$1${REDACTED}`);
}
