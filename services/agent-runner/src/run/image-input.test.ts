import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../providers/model-provider.js";
import { checkImageInput } from "./image-input.js";

const image = { type: "image" as const, mimeType: "image/png" as const, data: "AAAA" };
const history: ChatMessage[] = [
  { role: "user", content: "see", images: [image] },
  { role: "assistant", content: "a square" },
];

describe("checkImageInput", () => {
  it("leaves everything to a model that reads images", () => {
    expect(checkImageInput(undefined, history, [{ role: "user", content: "again", images: [image] }])).toBe(history);
  });

  it("refuses a turn with images to a text-only model, naming it", () => {
    expect(() => checkImageInput("openai/text", [], [{ role: "user", content: "x", images: [image] }])).toThrow(
      expect.objectContaining({ code: "INVALID_REQUEST", message: expect.stringContaining("openai/text") }),
    );
  });

  it("tells a text-only model what earlier images were, in words", () => {
    expect(checkImageInput("openai/text", history, [{ role: "user", content: "and now?" }])).toEqual([
      { role: "user", content: "see\n[image: image/png, 3 bytes]" },
      { role: "assistant", content: "a square" },
    ]);
  });
});
