/**
 * Media for bridges that take the bytes rather than a link (signal-cli-rest-api, BlueBubbles):
 * fetched through the account's HTTP client, so the SSRF guard, redirects checked one by one,
 * the size limit and the deadline all apply, and named so the bridge (and the phone behind it)
 * can tell what kind of file it is.
 */
import { ChannelError } from "@gw/channels";
import { type HttpClient, HttpError } from "@gw/http-client";
import type { MediaLimits } from "../registry.js";

export interface MediaFile {
  bytes: Buffer;
  /** The MIME type without parameters, `application/octet-stream` when nobody said. */
  contentType: string;
  /** A plain file name with an extension: letters, digits, `.`, `_` and `-` only. */
  filename: string;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "image/heic": ".heic",
  "video/mp4": ".mp4",
  "video/quicktime": ".mov",
  "audio/mpeg": ".mp3",
  "audio/mp4": ".m4a",
  "audio/aac": ".aac",
  "audio/ogg": ".ogg",
  "application/pdf": ".pdf",
  "text/plain": ".txt",
};
const TYPES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type]));
const OCTET_STREAM = "application/octet-stream";
const MAX_NAME = 80;

/**
 * Downloads one medium within `limits`. `n` (1-based) names it in errors and in the fallback
 * file name. Failures are ChannelErrors: a refused, missing, empty or too large file is
 * `rejected`; a media host that is down, slow or rate limiting is `unavailable` (its 429 is
 * not the platform's, so it must not cool the chat down).
 */
export async function fetchMedia(client: HttpClient, url: string, n: number, limits: MediaLimits, signal: AbortSignal): Promise<MediaFile> {
  let download;
  try {
    download = await client.download(url, { maxBytes: limits.maxBytes, timeoutMs: limits.timeoutMs, signal });
  } catch (err) {
    throw mediaError(err, n, limits);
  }
  if (download.bytes.length === 0) throw new ChannelError("rejected", `medium ${n} is empty`);
  const header = firstHeader(download.headers["content-type"])?.split(";")[0]?.trim().toLowerCase();
  const named = nameFrom(firstHeader(download.headers["content-disposition"]), download.url);
  const contentType = header && header !== OCTET_STREAM ? header : (typeFor(named) ?? header ?? OCTET_STREAM);
  return { bytes: download.bytes, contentType, filename: fileName(named, contentType, n) };
}

function mediaError(err: unknown, n: number, limits: MediaLimits): unknown {
  if (!(err instanceof HttpError)) return err;
  const what = `medium ${n} could not be downloaded`;
  if (err.kind === "too_large") return new ChannelError("rejected", `${what}: it is larger than ${limits.maxBytes} bytes (delivery.media.maxBytes)`, { cause: err });
  const transient = err.retryable || err.kind === "timeout" || err.kind === "network";
  return new ChannelError(transient ? "unavailable" : "rejected", `${what}: ${err.message}`, { cause: err, status: err.status });
}

const firstHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The name a Content-Disposition gives, else the last segment of the URL's path. */
function nameFrom(disposition: string | undefined, url: string): string {
  const given = disposition === undefined ? undefined : /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
  if (given !== undefined) return decode(given);
  try {
    return decode(new URL(url).pathname.split("/").at(-1) ?? "");
  } catch {
    return "";
  }
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function extensionOf(name: string): string | undefined {
  const match = /\.[a-z0-9]{1,8}$/i.exec(name);
  return match?.[0].toLowerCase();
}

function typeFor(name: string): string | undefined {
  const ext = extensionOf(name);
  return ext === undefined ? undefined : TYPES[ext === ".jpeg" ? ".jpg" : ext];
}

/**
 * A name safe in a data URI (no `;` or `,`) and in a file system, with an extension: bridges
 * and phones pick the viewer by it, and BlueBubbles matches the sent message by its name.
 */
function fileName(raw: string, contentType: string, n: number): string {
  let name = raw
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(-MAX_NAME);
  if (name === "" || name === "_") name = `attachment-${n}`;
  if (extensionOf(name) === undefined) name += EXTENSIONS[contentType] ?? "";
  return name;
}
