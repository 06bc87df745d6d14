/**
 * Media for Discord go up as attachments: the plugin downloads each URL (SSRF-guarded, bounded)
 * and uploads the bytes with the message. An image embed would only show images, and only while
 * the URL lives; an attachment shows any file, and Discord keeps it.
 */
import { ChannelError } from "@gw/channels";
import { type Download, type HttpClient, HttpError } from "@gw/http-client";
import type { UploadFile } from "./api.js";

const MIB = 1024 * 1024;
/** Discord's upload limit per file for bots outside boosted servers (and in DMs). */
export const MAX_FILE_BYTES = 10 * MIB;
/** Discord refuses larger message requests; it also bounds what one send holds in memory. */
export const MAX_MESSAGE_BYTES = 25 * MIB;

const EXTENSIONS: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "video/quicktime": "mov",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/wav": "wav",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

function mediaType(download: Download): string {
  const value = download.headers["content-type"];
  const type = (Array.isArray(value) ? value[0] : value)?.split(";")[0]?.trim().toLowerCase();
  return type === undefined || type === "" ? "application/octet-stream" : type;
}

/** `attachment; filename="report.pdf"` -> "report.pdf" (the plain form; RFC 5987's `filename*` too). */
function dispositionName(download: Download): string | undefined {
  const value = download.headers["content-disposition"];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const extended = /filename\*\s*=\s*[\w-]*'[^']*'([^;]+)/i.exec(text);
  if (extended !== null) {
    try {
      return decodeURIComponent(extended[1]!.trim());
    } catch {
      // an undecodable name: fall back to the plain one
    }
  }
  return /filename\s*=\s*"?([^";]+)"?/i.exec(text)?.[1]?.trim();
}

function lastSegment(url: string): string | undefined {
  try {
    const segment = new URL(url).pathname.split("/").filter(Boolean).at(-1);
    return segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The name Discord shows and uses to decide how to render the file (an image extension renders
 * inline): the server's name for it, else the URL's last segment, with an extension from the
 * media type when it has none.
 */
export function attachmentName(download: Download, index: number): string {
  const raw = dispositionName(download) ?? lastSegment(download.url) ?? "";
  let name = raw.replace(/[^\w.-]+/g, "_").replace(/^[._]+/, "").slice(0, 100);
  if (name === "") name = `attachment-${index + 1}`;
  const extension = EXTENSIONS[mediaType(download)];
  if (!/\.\w{1,8}$/.test(name) && extension !== undefined) name = `${name}.${extension}`;
  return name;
}

/** A failed download as the port wants it: the media URL is the caller's, so most failures are final. */
function mediaError(err: unknown, index: number, limit: number): unknown {
  if (!(err instanceof HttpError)) return err;
  const which = `media ${index + 1}${err.url === undefined ? "" : ` (${err.url})`}`;
  switch (err.kind) {
    case "too_large": {
      const what = limit < MAX_FILE_BYTES ? `takes the message past the ${MAX_MESSAGE_BYTES / MIB} MiB` : `is larger than the ${MAX_FILE_BYTES / MIB} MiB`;
      return new ChannelError("rejected", `${which} ${what} Discord takes`, { cause: err });
    }
    case "ssrf":
      return new ChannelError("rejected", `${which} cannot be fetched: ${err.message}`, { cause: err });
    case "status":
      return new ChannelError(err.retryable ? "unavailable" : "rejected", `${which} answered HTTP ${err.status}`, { cause: err });
    case "timeout":
    case "network":
      return new ChannelError("unavailable", `${which} could not be downloaded: ${err.message}`, { cause: err });
    default:
      return new ChannelError("rejected", `${which} could not be downloaded: ${err.message}`, { cause: err });
  }
}

/** Downloads every URL in order, within one message's byte budget. */
export async function downloadAttachments(media: HttpClient, urls: readonly string[], signal: AbortSignal): Promise<UploadFile[]> {
  const files: UploadFile[] = [];
  let budget = MAX_MESSAGE_BYTES;
  for (const [index, url] of urls.entries()) {
    const limit = Math.min(MAX_FILE_BYTES, budget);
    let download: Download;
    try {
      download = await media.download(url, { maxBytes: limit, signal });
    } catch (err) {
      throw mediaError(err, index, limit);
    }
    budget -= download.bytes.length;
    files.push({ filename: attachmentName(download, index), contentType: mediaType(download), data: new Uint8Array(download.bytes) });
  }
  return files;
}
