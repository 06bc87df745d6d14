import { describeImage, GatewayError } from "@gw/contracts";
import type { ChatMessage } from "../providers/model-provider.js";

/**
 * What a model without image input (`textOnly`, the chain's first such model; undefined when
 * every model reads images) may be given. A turn that brings images to it is refused: the
 * client learns the images went nowhere instead of getting an answer that ignored them. The
 * images of earlier turns (stored while the session had a model that reads them) become a line
 * of text saying what each was, so the model knows they were there. Answers the history to run with.
 */
export function checkImageInput(textOnly: string | undefined, history: ChatMessage[], turn: ChatMessage[]): ChatMessage[] {
  if (textOnly === undefined) return history;
  if (turn.some((m) => m.role === "user" && m.images?.length))
    throw new GatewayError("INVALID_REQUEST", `model ${textOnly} takes no image input (models.providers.<id>.input lists "image" where it does)`);
  return history.map((m) => {
    if (m.role !== "user" || !m.images?.length) return m;
    return { role: "user", content: [m.content, ...m.images.map(describeImage)].filter((line) => line !== "").join("\n") };
  });
}
