/**
 * Session keys (SPEC §2): `<prefix>:<identifier>`. The prefix is a category or a channel id, so
 * it keeps to the spelling ids use; the identifier is whatever the channel's recipient format
 * needs (`+15551234567`, `@ops`, `#general`, `user@example.com`, more `:`s).
 */

/** In UTF-8 bytes: keeps a key (base64url-encoded, ~4/3 longer) inside one NATS subject token comfortably. */
export const SESSION_KEY_MAX_BYTES = 512;

/** The prefix's spelling: also what a channel id given as a param must look like (the same string). */
export const SESSION_KEY_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
// Control characters would break logs, file headers and subjects' neighbours; nothing legitimate has them.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `key` is not a valid session key, or undefined when it is. */
export function sessionKeyProblem(key: string): string | undefined {
  if (key.length === 0) return "session key must not be empty";
  if (Buffer.byteLength(key, "utf8") > SESSION_KEY_MAX_BYTES)
    return `session key must be at most ${SESSION_KEY_MAX_BYTES} bytes`;
  const colon = key.indexOf(":");
  if (colon === -1) return "session key must look like <prefix>:<identifier>";
  if (!SESSION_KEY_PREFIX.test(key.slice(0, colon)))
    return "session key prefix must be 1-64 letters, digits, '_', '.' or '-'";
  if (colon === key.length - 1) return "session key identifier must not be empty";
  if (CONTROL.test(key)) return "session key must not contain control characters";
  return undefined;
}
