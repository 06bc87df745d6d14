import type { InboundAttachment } from "@gw/channels";

/** What a platform says of a file; null, undefined and "" mean it did not say. */
export interface FileFacts {
  /** Default: from the MIME type (image, video or audio, else file). */
  kind?: string;
  name?: string | null;
  mimeType?: string | null;
  size?: number | null;
  url?: string | null;
  id?: string | null;
}

/** An attachment holding only the facts the platform gave. */
export function inboundAttachment(facts: FileFacts): InboundAttachment {
  const major = facts.mimeType?.split("/")[0]?.toLowerCase();
  const kind = facts.kind ?? (major === "image" || major === "video" || major === "audio" ? major : "file");
  return {
    kind,
    ...(facts.name ? { name: facts.name } : {}),
    ...(facts.mimeType ? { mimeType: facts.mimeType } : {}),
    ...(typeof facts.size === "number" ? { size: facts.size } : {}),
    ...(facts.url ? { url: facts.url } : {}),
    ...(facts.id ? { id: facts.id } : {}),
  };
}
