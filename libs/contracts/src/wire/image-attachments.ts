import { z } from "zod";
import type { RunAttachment } from "../gen/gateway/v1/runs.pb.js";

/**
 * Images that come with a user message (docs/protocol.md `attachments`), in every form a surface
 * takes them: the `agent` RPC's `attachments`, an OpenAI request's image parts, a channel photo.
 * An image is an https URL the model provider fetches, or its bytes; bytes travel in the run
 * request and are stored with the session's user message, so they are bounded to fit one bus
 * message (NATS max_payload, 1 MiB by default) with the text beside them.
 */

export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];

/**
 * The bytes of all the inline images of one message together (decoded, not base64). Stored
 * with the session's user message, base64 inside the entry's meta, they must leave that entry
 * and the answer appended beside it room in one bus message.
 */
export const MAX_IMAGE_BYTES = 384 * 1024;
/** Images one message may carry. */
export const MAX_IMAGES = 8;
const MAX_URL = 2_048;

/** An image as the session and the runner keep it: a URL, or base64 bytes. */
export type ImageAttachment = { type: "image"; mimeType: ImageMimeType; url: string } | { type: "image"; mimeType: ImageMimeType; data: string };

export function isImageMimeType(value: string): value is ImageMimeType {
  return (IMAGE_MIME_TYPES as readonly string[]).includes(value);
}

/** Why `url` cannot name an image (https only: the provider fetches it), or undefined. */
export function imageUrlProblem(url: string): string | undefined {
  if (url.length > MAX_URL) return `an image URL must be at most ${MAX_URL} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL";
  }
  return parsed.protocol === "https:" ? undefined : "an image URL must be https: or a data: URL";
}

/** Decoded size of base64 text, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `data:image/png;base64,...` as an image, or the reason it is not one. */
export function parseDataUrl(url: string): ImageAttachment | string {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match === null) return "a data: URL must be data:<mime type>;base64,<bytes>";
  const mimeType = match[1]!.toLowerCase();
  if (!isImageMimeType(mimeType)) return `image type ${mimeType} is not supported (${IMAGE_MIME_TYPES.join(", ")})`;
  return inlineImage(mimeType, match[2]!);
}

function inlineImage(mimeType: ImageMimeType, data: string): ImageAttachment | string {
  if (data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) return "the image data is not base64";
  if (base64Bytes(data) > MAX_IMAGE_BYTES) return `an image must be at most ${MAX_IMAGE_BYTES} bytes`;
  return { type: "image", mimeType, data };
}

/** An OpenAI `image_url` / `input_image` URL (https or data:) as an image, or the reason it is not one. */
export function imageFromUrl(url: string): ImageAttachment | string {
  if (url.startsWith("data:")) return parseDataUrl(url);
  const problem = imageUrlProblem(url);
  if (problem !== undefined) return problem;
  const mimeType = mimeTypeOfUrl(url);
  return { type: "image", mimeType, url };
}

/** What a URL's extension says, else JPEG, the common case (providers read the bytes anyway). */
function mimeTypeOfUrl(url: string): ImageMimeType {
  const path = new URL(url).pathname.toLowerCase();
  if (path.endsWith(".png")) return "image/png";
  if (path.endsWith(".gif")) return "image/gif";
  if (path.endsWith(".webp")) return "image/webp";
  return "image/jpeg";
}

/** Why a message's images together are too many or too large, or undefined. */
export function imagesProblem(images: readonly ImageAttachment[]): string | undefined {
  if (images.length > MAX_IMAGES) return `a message may carry at most ${MAX_IMAGES} images`;
  const bytes = images.reduce((sum, image) => sum + ("data" in image ? base64Bytes(image.data) : 0), 0);
  return bytes > MAX_IMAGE_BYTES ? `the images of one message must be at most ${MAX_IMAGE_BYTES} bytes together` : undefined;
}

/** The `agent` RPC's `attachments[]` element. */
export const AttachmentParamSchema = z
  .strictObject({
    type: z.literal("image", { error: 'type must be "image"' }),
    mimeType: z.enum(IMAGE_MIME_TYPES, { error: `mimeType must be one of ${IMAGE_MIME_TYPES.join(", ")}` }),
    url: z.string().max(MAX_URL).optional(),
    data: z.string().max(Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 4).optional(),
  })
  .transform((a, ctx): ImageAttachment => {
    const fail = (message: string, path: string): ImageAttachment => {
      ctx.addIssue({ code: "custom", message, path: [path] });
      return z.NEVER;
    };
    if ((a.url === undefined) === (a.data === undefined)) return fail("set exactly one of url and data", "url");
    if (a.url !== undefined) {
      const problem = imageUrlProblem(a.url);
      return problem === undefined ? { type: "image", mimeType: a.mimeType, url: a.url } : fail(problem, "url");
    }
    const image = inlineImage(a.mimeType, a.data!);
    return typeof image === "string" ? fail(image, "data") : image;
  });

export const AttachmentsParamSchema = z
  .array(AttachmentParamSchema)
  .max(MAX_IMAGES, `at most ${MAX_IMAGES} attachments`)
  .superRefine((images, ctx) => {
    const problem = imagesProblem(images);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });

/** An image as the run request carries it. */
export function toRunAttachment(image: ImageAttachment): RunAttachment {
  return "data" in image
    ? { type: "image", mimeType: image.mimeType, url: "", data: Buffer.from(image.data, "base64") }
    : { type: "image", mimeType: image.mimeType, url: image.url, data: Buffer.alloc(0) };
}

/** A run request's attachment as an image; one of another type or MIME type is left out. */
export function fromRunAttachment(a: RunAttachment): ImageAttachment | undefined {
  if (a.type !== "image" || !isImageMimeType(a.mimeType)) return undefined;
  if (a.url !== "") return { type: "image", mimeType: a.mimeType, url: a.url };
  return { type: "image", mimeType: a.mimeType, data: Buffer.from(a.data).toString("base64") };
}

/** How a stored image reads back (session entry meta, inbound store). */
export const StoredImageSchema = z.union([
  z.object({ type: z.literal("image"), mimeType: z.enum(IMAGE_MIME_TYPES), url: z.string() }),
  z.object({ type: z.literal("image"), mimeType: z.enum(IMAGE_MIME_TYPES), data: z.string() }),
]);

/** What `sessions.preview` shows of an image: never its bytes. */
export interface ImageAttachmentView {
  type: "image";
  mimeType: string;
  url?: string;
  size?: number;
}

export function imageView(image: ImageAttachment): ImageAttachmentView {
  return "data" in image ? { type: "image", mimeType: image.mimeType, size: base64Bytes(image.data) } : { type: "image", mimeType: image.mimeType, url: image.url };
}

const MetaImagesSchema = z.object({ images: z.array(StoredImageSchema).optional() });

/**
 * The images a session entry's meta holds (`{"images": [...]}` beside the runner's other extras);
 * none when the meta holds none or does not read.
 */
export function imagesOfEntryMeta(metaJson: Uint8Array): ImageAttachment[] {
  if (metaJson.length === 0) return [];
  try {
    const parsed = MetaImagesSchema.safeParse(JSON.parse(Buffer.from(metaJson).toString("utf8")));
    return parsed.success ? (parsed.data.images ?? []) : [];
  } catch {
    return [];
  }
}

/** One line saying what an image is, for a reader of text: its type and URL, or its size. */
export function describeImage(image: ImageAttachment): string {
  return "data" in image ? `[image: ${image.mimeType}, ${base64Bytes(image.data)} bytes]` : `[image: ${image.mimeType}, ${image.url}]`;
}

/** The image type the bytes themselves say (their magic numbers), whatever a header claimed. */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 6 && (b.toString("latin1", 0, 6) === "GIF87a" || b.toString("latin1", 0, 6) === "GIF89a")) return "image/gif";
  if (b.length >= 12 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  return undefined;
}
