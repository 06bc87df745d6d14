/**
 * WhatsApp fetches media links itself and takes each as one typed message: image (JPEG, PNG),
 * video (MP4, 3GPP), audio (AAC, AMR, MP3, M4A, OGG/Opus) or document (anything). The plugin
 * does not download the file to learn its type, so the URL's extension decides; a file it
 * cannot place goes as a document, which WhatsApp delivers whatever it holds (GIF and WebP
 * included: WhatsApp takes neither as an image).
 */
import type { WhatsAppMediaType } from "./api.js";

const BY_EXTENSION: Readonly<Record<string, WhatsAppMediaType>> = {
  jpg: "image",
  jpeg: "image",
  png: "image",
  mp4: "video",
  "3gp": "video",
  "3gpp": "video",
  aac: "audio",
  amr: "audio",
  mp3: "audio",
  m4a: "audio",
  ogg: "audio",
  opus: "audio",
};

/** Media types that take a caption (audio does not). */
export const CAPTIONED: ReadonlySet<WhatsAppMediaType> = new Set(["image", "video", "document"]);
export const WHATSAPP_CAPTION_LIMIT = 1024;

export interface WhatsAppMedium {
  type: WhatsAppMediaType;
  /** The URL's last path segment: the name a document is shown under. */
  filename?: string;
}

export function whatsappMedium(url: string): WhatsAppMedium {
  let segment: string | undefined;
  try {
    segment = decodeURIComponent(new URL(url).pathname.split("/").filter(Boolean).at(-1) ?? "");
  } catch {
    segment = undefined;
  }
  const extension = /\.([a-z0-9]{1,5})$/i.exec(segment ?? "")?.[1]?.toLowerCase();
  const type = (extension === undefined ? undefined : BY_EXTENSION[extension]) ?? "document";
  return type === "document" && segment !== undefined && segment !== "" ? { type, filename: segment.slice(0, 240) } : { type };
}
