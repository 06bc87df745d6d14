import { imageFromUrl, type ImageAttachment, imagesProblem, toRunAttachment } from "@gw/contracts";
import { z } from "zod";
import { invalidParam } from "./params.js";

/**
 * Content parts of an OpenAI message, for both APIs: text parts, and images where a user message
 * has them (chat completions' `image_url` with `{ url }`, the Responses API's `input_image` with
 * `image_url`). An image is an https URL, passed to the model provider as is, or a data: URL
 * (docs/decisions.md, Images in). Any other part, and an image anywhere but a user message, is
 * refused with its path.
 */

const PartSchema = z.object({ type: z.string().optional() }).loose();

/** `image_url.url` (chat) or `image_url` (Responses); `detail` is a hint the providers take or ignore. */
const ChatImageSchema = z.object({ image_url: z.object({ url: z.string(), detail: z.string().optional() }) });
const InputImageSchema = z.object({ image_url: z.string({ error: "input_image needs image_url (file_id is not supported)" }), detail: z.string().optional() });

export interface PartsRules {
  /** Part types that carry `text`. */
  text: ReadonlySet<string>;
  /** Only a user message's parts may be images. */
  images: boolean;
}

/** The text of the parts, and the images among them with where each is in the body. */
export interface ReadContent {
  text: string;
  images: ImageAttachment[];
  imageParams: string[];
}

function image(part: z.output<typeof PartSchema>, param: string): ImageAttachment {
  const schema = part.type === "image_url" ? ChatImageSchema : InputImageSchema;
  const parsed = schema.safeParse(part);
  if (!parsed.success) throw invalidParam(param, parsed.error.issues[0]!.message);
  const url = typeof parsed.data.image_url === "string" ? parsed.data.image_url : parsed.data.image_url.url;
  const read = imageFromUrl(url);
  if (typeof read === "string") throw invalidParam(param, read);
  return read;
}

export function readParts(parts: readonly unknown[], where: string, rules: PartsRules): ReadContent {
  const out: ReadContent = { text: "", images: [], imageParams: [] };
  parts.forEach((raw, i) => {
    const parsed = PartSchema.safeParse(raw);
    const type = parsed.success ? parsed.data.type : undefined;
    const param = `${where}.content[${i}]`;
    if (parsed.success && (type === "image_url" || type === "input_image") && rules.images) {
      out.images.push(image(parsed.data, param));
      out.imageParams.push(param);
    } else if (parsed.success && rules.text.has(type ?? "") && typeof parsed.data.text === "string") out.text += parsed.data.text;
    else {
      const what = rules.images ? "text and images" : "text only";
      throw invalidParam(`${param}.type`, `"${String(type)}" content parts are not supported here (${what})`);
    }
  });
  const problem = imagesProblem(out.images);
  if (problem !== undefined) throw invalidParam(`${where}.content`, problem);
  return out;
}

/** A user message's images as the run carries them. */
export function runAttachments(content: ReadContent) {
  return content.images.map(toRunAttachment);
}
