/**
 * Which Bot API method carries a media URL, and how a list of media becomes albums.
 *
 * Telegram fetches URLs itself, but it files them by the method they come in: sendPhoto,
 * sendVideo, sendAnimation (a looping GIF or silent MP4), sendAudio (MP3/M4A) or sendDocument.
 * A URL's extension usually says which; where it does not, the file is fetched and its
 * Content-Type decides, and then the bytes are uploaded (Telegram would only fetch it again).
 * sendDocument by URL works only for GIF, PDF and ZIP files, so other documents are uploaded too.
 */

export type TelegramMediaKind = "photo" | "video" | "animation" | "audio" | "document";

/** One medium, ready to send: by URL, or with the bytes to upload. */
export interface TelegramMedium {
  kind: TelegramMediaKind;
  url: string;
  upload?: { bytes: Uint8Array; filename: string; contentType: string };
}

/** sendMediaGroup takes 2-10 items. */
export const ALBUM_MAX = 10;

const BY_EXTENSION: Readonly<Record<string, TelegramMediaKind>> = {
  jpg: "photo",
  jpeg: "photo",
  png: "photo",
  webp: "photo",
  gif: "animation",
  mp4: "video",
  m4v: "video",
  mp3: "audio",
  m4a: "audio",
  pdf: "document",
  zip: "document",
  txt: "document",
  csv: "document",
  json: "document",
  doc: "document",
  docx: "document",
  xls: "document",
  xlsx: "document",
  ppt: "document",
  pptx: "document",
  mov: "document",
  webm: "document",
  ogg: "document",
  wav: "document",
};

/** The only documents Telegram takes by URL (Bot API, "Sending files"). */
const DOCUMENT_BY_URL = new Set(["pdf", "zip", "gif"]);

/** What can play as a looping, silent animation (an MP4 clip or a GIF). */
const ANIMATABLE = new Set<TelegramMediaKind>(["video", "animation"]);

/** The last path segment of a URL, decoded ("" when there is none). */
export function fileNameOf(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return "";
  }
  const last = path.slice(path.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function extensionOf(url: string): string {
  const name = fileNameOf(url);
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}

/** `gifPlayback` turns an MP4 video into a looping animation; a GIF always is one. */
function withPlayback(kind: TelegramMediaKind, gifPlayback: boolean): TelegramMediaKind {
  return gifPlayback && ANIMATABLE.has(kind) ? "animation" : kind;
}

/** The kind a URL's extension names, or undefined when it names none we know. */
export function kindFromUrl(url: string, gifPlayback: boolean): TelegramMediaKind | undefined {
  const kind = BY_EXTENSION[extensionOf(url)];
  return kind === undefined ? undefined : withPlayback(kind, gifPlayback);
}

/** The kind a Content-Type names; anything unknown is a document. */
export function kindFromContentType(contentType: string | undefined, gifPlayback: boolean): TelegramMediaKind {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  let kind: TelegramMediaKind = "document";
  if (type === "image/gif") kind = "animation";
  else if (type === "image/jpeg" || type === "image/png" || type === "image/webp") kind = "photo";
  else if (type === "video/mp4") kind = "video";
  else if (type === "audio/mpeg" || type === "audio/mp4" || type === "audio/x-m4a") kind = "audio";
  return withPlayback(kind, gifPlayback);
}

/** Whether Telegram can fetch this URL itself as `kind`. */
export function sendableByUrl(kind: TelegramMediaKind, url: string): boolean {
  return kind !== "document" || DOCUMENT_BY_URL.has(extensionOf(url));
}

/** What an album may hold together: photos with videos; documents alone; audio alone; animations never. */
function albumClass(kind: TelegramMediaKind): string | undefined {
  if (kind === "photo" || kind === "video") return "visual";
  if (kind === "animation") return undefined;
  return kind;
}

/**
 * Splits media, in order, into what goes out together: runs of media that may share an album
 * (at most ALBUM_MAX each) and single media. Order is kept, so a document between two photos
 * makes three sends rather than moving a photo.
 */
export function planAlbums<T extends { kind: TelegramMediaKind }>(media: readonly T[]): T[][] {
  const albums: T[][] = [];
  for (const medium of media) {
    const cls = albumClass(medium.kind);
    const last = albums.at(-1);
    const fits = cls !== undefined && last !== undefined && last.length < ALBUM_MAX && albumClass(last[0]!.kind) === cls;
    if (fits) last.push(medium);
    else albums.push([medium]);
  }
  return albums;
}
