import { createHash } from "node:crypto";
import { ChannelError, type InboundAttachment, type InboundFiles, type InboundMessage } from "@gw/channels";
import {
  decodeJson,
  IMAGE_MIME_TYPES,
  type ImageAttachment,
  imagesProblem,
  isImageMimeType,
  sniffImageType,
  StoredImageSchema,
} from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

export interface InboundMediaDeps {
  /** Where fetched images wait for their run (the durable `delivery_media` bucket). */
  kv: DurableKv;
  /** delivery.inbound.maxMediaBytes: the largest file fetched. */
  maxBytes: number;
  /** The agent's first model without image input (textOnlyModelOf), or undefined. */
  textOnlyModel(agentId: string): string | undefined;
}

/** A turn's images, and the attachments they came from (described no more in the text). */
export interface TurnMedia {
  images: ImageAttachment[];
  fetched: ReadonlySet<string>;
}

export type MediaOutcome = TurnMedia | { refusal: string };

const NONE: TurnMedia = { images: [], fetched: new Set() };

const StoredSchema = z.object({ images: z.array(StoredImageSchema), fetched: z.array(z.string()) });

/** The one key an attachment has in a turn: its message and its place there. */
export function attachmentKey(msg: Pick<InboundMessage, "eventId">, index: number): string {
  return `${msg.eventId}#${index}`;
}

function isImage(a: InboundAttachment): boolean {
  return a.kind === "image" || (a.mimeType !== undefined && a.mimeType.toLowerCase().startsWith("image/"));
}

function kb(bytes: number): string {
  return `${Math.floor(bytes / 1024)} KB`;
}

function nameOf(a: InboundAttachment): string {
  return a.name !== undefined && a.name !== "" ? `"${a.name.slice(0, 80)}"` : `the ${a.kind}`;
}

/** Not an error: what the sender reads. */
class Refused extends Error {}

/**
 * Images people send on a channel, for an agent whose model reads them (issue 25 §2): each file
 * of a turn is fetched through the plugin's InboundFiles (the account's SSRF-guarded client, at
 * most `maxBytes`), checked to be a PNG, JPEG, GIF or WebP image by its bytes, and kept in the
 * durable store under the turn's run id before the run starts, so a turn taken up again after a
 * crash hands the run the same images without fetching them again. A file that is not such an
 * image, or too large, ends the turn with a reply saying so; nothing is kept and nothing runs.
 * A platform without InboundFiles, or an agent without image input, gets the files described
 * in text, as before.
 */
export class InboundMedia {
  /** Run ids whose images this process stored or read: only those have a record to delete. */
  private readonly held = new Set<string>();

  constructor(private readonly deps: InboundMediaDeps) {}

  static storeKey(runId: string): string {
    return `m_${createHash("sha256").update(runId).digest("base64url").slice(0, 32)}`;
  }

  async prepare(files: InboundFiles | undefined, agentId: string, runId: string, messages: readonly InboundMessage[], signal: AbortSignal): Promise<MediaOutcome> {
    const attached = messages.flatMap((msg) => (msg.attachments ?? []).map((a, i) => ({ key: attachmentKey(msg, i), a })));
    if (files === undefined || attached.length === 0 || this.deps.textOnlyModel(agentId) !== undefined) return NONE;
    const key = InboundMedia.storeKey(runId);
    const kept = await this.deps.kv.get(key);
    if (kept !== null) {
      const stored = decodeJson(kept.value, StoredSchema, "inbound media record");
      this.held.add(runId);
      return { images: stored.images, fetched: new Set(stored.fetched) };
    }
    const images: ImageAttachment[] = [];
    try {
      for (const { a } of attached) images.push(await this.fetchImage(files, a, signal));
    } catch (err) {
      if (err instanceof Refused) return { refusal: err.message };
      throw err;
    }
    const problem = imagesProblem(images);
    if (problem !== undefined) return { refusal: `${problem}: send fewer or smaller images.` };
    const fetched = attached.map(({ key: k }) => k);
    await this.deps.kv.put(key, Buffer.from(JSON.stringify({ images, fetched }), "utf8"));
    this.held.add(runId);
    return { images, fetched: new Set(fetched) };
  }

  /**
   * Once the turn's answer is kept (or it has none): its images are in the session now. A turn
   * without images costs nothing here.
   */
  async forget(runId: string): Promise<void> {
    if (!this.held.has(runId)) return;
    await this.deps.kv.delete(InboundMedia.storeKey(runId));
    this.held.delete(runId);
  }

  private async fetchImage(files: InboundFiles, a: InboundAttachment, signal: AbortSignal): Promise<ImageAttachment> {
    const accepted = `I can read images (${IMAGE_MIME_TYPES.map((t) => t.slice("image/".length).toUpperCase()).join(", ")}) of up to ${kb(this.deps.maxBytes)}`;
    if (!isImage(a) || (a.mimeType !== undefined && !isImageMimeType(a.mimeType.toLowerCase())))
      throw new Refused(`${accepted}; ${nameOf(a)} is not one, so I did not read your message.`);
    if (a.size !== undefined && a.size > this.deps.maxBytes)
      throw new Refused(`${accepted}; ${nameOf(a)} is ${kb(a.size)}, so I did not read your message. Send a smaller image.`);
    let file;
    try {
      file = await files.fetch(a, { maxBytes: this.deps.maxBytes, signal });
    } catch (err) {
      // A file the platform will not hand over (gone, refused) is for good; anything else is tried again.
      if (err instanceof ChannelError && err.kind === "rejected") throw new Refused(`I could not fetch ${nameOf(a)} from the platform, so I did not read your message.`);
      throw err;
    }
    if (file.kind === "too_large") throw new Refused(`${accepted}; ${nameOf(a)} is larger, so I did not read your message. Send a smaller image.`);
    const mimeType = sniffImageType(file.bytes);
    if (mimeType === undefined) throw new Refused(`${accepted}; ${nameOf(a)} is not one, so I did not read your message.`);
    return { type: "image", mimeType, data: Buffer.from(file.bytes).toString("base64") };
  }
}
