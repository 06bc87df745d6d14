/**
 * A form or multipart field that carries an object as a JSON-serialised string (Telegram's
 * `media` and `options`, Slack's `blocks` and `attachments`), parsed; anything else as it came.
 */
export function formJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
