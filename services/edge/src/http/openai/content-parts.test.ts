import { MAX_IMAGE_BYTES } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { chatRequest } from "./chat-body.js";
import { checkImageInput, resolveAgent, runParams } from "./conversation.js";
import { responsesRequest } from "./responses-body.js";

const agents = (model: string) => resolveAgent(["main", "oa"], model);
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
const dataUrl = `data:image/png;base64,${PNG}`;
const chat = (content: unknown, role = "user") => chatRequest({ model: "oa", messages: [{ role, content }] }, agents).request;
const responses = (content: unknown, role = "user") => responsesRequest({ model: "oa", input: [{ role, content }] }, agents).request;

function refusal(make: () => unknown): unknown {
  try {
    make();
  } catch (err) {
    return err;
  }
  throw new Error("not refused");
}

describe("image content parts", () => {
  it("carries a chat image_url (data: and https) with the text into the run's attachments", () => {
    const request = chat([
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: dataUrl, detail: "low" } },
      { type: "image_url", image_url: { url: "https://example.com/cat.webp" } },
    ]);
    expect(request.imageParams).toEqual(["messages[0].content[1]", "messages[0].content[2]"]);
    const params = runParams(request, "r");
    expect(params.message).toBe("what is this?");
    expect(params.attachments).toEqual([
      { type: "image", mimeType: "image/png", data: PNG },
      { type: "image", mimeType: "image/webp", url: "https://example.com/cat.webp" },
    ]);
  });

  it("carries a Responses input_image, and an image alone is a turn", () => {
    const params = runParams(responses([{ type: "input_image", image_url: dataUrl }]), "r");
    expect(params.message).toBe("");
    expect(params.attachments).toEqual([{ type: "image", mimeType: "image/png", data: PNG }]);
  });

  it("keeps an earlier user message's images in a stateless run's history", () => {
    const { request } = chatRequest(
      {
        model: "oa",
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: dataUrl } }] },
          { role: "assistant", content: "a chart" },
          { role: "user", content: "and the title?" },
        ],
      },
      agents,
    );
    const params = runParams(request, "r");
    expect(params.attachments).toBeUndefined();
    expect(params.ephemeralHistory?.[0]?.attachments).toEqual([{ type: "image", mimeType: "image/png", url: "", data: Buffer.from(PNG, "base64") }]);
  });

  const big = `data:image/png;base64,${Buffer.alloc(MAX_IMAGE_BYTES + 3).toString("base64")}`;
  it.each([
    ["an http URL", [{ type: "image_url", image_url: { url: "http://example.com/a.png" } }], "user", "messages[0].content[0]"],
    ["a type that is not an image", [{ type: "image_url", image_url: { url: "data:text/plain;base64,aGk=" } }], "user", "messages[0].content[0]"],
    ["bytes that are not base64", [{ type: "image_url", image_url: { url: "data:image/png;base64,%%%" } }], "user", "messages[0].content[0]"],
    ["an image over the limit", [{ type: "image_url", image_url: { url: big } }], "user", "messages[0].content[0]"],
    ["an image in a system message", [{ type: "image_url", image_url: { url: dataUrl } }], "system", "messages[0].content[0].type"],
    ["an image_url without url", [{ type: "image_url", image_url: {} }], "user", "messages[0].content[0]"],
  ])("refuses %s, naming the part", (_what, content, role, param) => {
    expect(refusal(() => chat(content, role))).toMatchObject({ code: "INVALID_REQUEST", details: { param } });
  });

  it("refuses an input_image by file_id and one in an assistant message", () => {
    expect(refusal(() => responses([{ type: "input_image", file_id: "file_1" }]))).toMatchObject({ details: { param: "input[0].content[0]" } });
    expect(refusal(() => responses([{ type: "input_image", image_url: dataUrl }], "assistant"))).toMatchObject({
      details: { param: "input[0].content[0].type" },
    });
  });

  it("refuses images to a model without image input, naming the first image part", () => {
    const request = chat([{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: dataUrl } }]);
    expect(refusal(() => checkImageInput(request, () => "openai/gpt-text"))).toMatchObject({
      code: "INVALID_REQUEST",
      details: { param: "messages[0].content[1]" },
      message: expect.stringContaining("openai/gpt-text"),
    });
    expect(() => checkImageInput(request, () => undefined)).not.toThrow();
    expect(() => checkImageInput(chat("text only"), () => "openai/gpt-text")).not.toThrow();
  });
});
