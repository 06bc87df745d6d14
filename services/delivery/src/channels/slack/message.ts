/**
 * How an outbound message looks on Slack's wire. Text is sent as literal text: Slack reads
 * `&`, `<` and `>` as markup (links, `<!channel>` mentions), so they are escaped, as Slack's
 * formatting guide asks; its other mrkdwn (`*bold*`) still renders. Media travel by URL: an
 * image (PNG, JPEG, GIF: the types image blocks take) as an image block Slack fetches; anything
 * else as a link in a mrkdwn section, since Slack posts other files only as uploads.
 */

/** A section's text takes at most 3000 characters. */
export const SECTION_TEXT_MAX = 3000;
/** alt_text takes at most 2000 characters. */
const ALT_TEXT_MAX = 2000;

const IMAGE_EXTENSIONS = new Set(["png", "jpg", "jpeg", "gif"]);

export type SlackBlock =
  | { type: "section"; text: { type: "mrkdwn"; text: string } }
  | { type: "image"; image_url: string; alt_text: string };

/** Text as Slack shows it literally. */
export function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The URL's file name (decoded), or a stand-in. */
export function fileNameOf(url: string, fallback: string): string {
  let name: string;
  try {
    name = new URL(url).pathname.split("/").at(-1) ?? "";
    name = decodeURIComponent(name);
  } catch {
    name = "";
  }
  return name === "" ? fallback : name;
}

export function isImageUrl(url: string): boolean {
  const name = fileNameOf(url, "");
  const dot = name.lastIndexOf(".");
  return dot > 0 && IMAGE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

export function section(mrkdwn: string): SlackBlock {
  return { type: "section", text: { type: "mrkdwn", text: mrkdwn } };
}

/**
 * An image block, or a section with the link `<url|name>`: a `|` in the URL would end it
 * early, so it is percent-encoded, and both are escaped like any text.
 */
export function mediaBlock(url: string): SlackBlock {
  if (isImageUrl(url)) return { type: "image", image_url: url, alt_text: fileNameOf(url, "image").slice(0, ALT_TEXT_MAX) };
  const target = escapeText(url.replace(/\|/g, "%7C"));
  return section(`<${target}|${escapeText(fileNameOf(url, "file"))}>`);
}

/** The notification text of a media-only message: the files' names. */
export function mediaFallback(urls: readonly string[]): string {
  return escapeText(urls.map((url) => fileNameOf(url, "file")).join(", "));
}
