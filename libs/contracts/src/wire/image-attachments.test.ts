import { describe, expect, it } from "vitest";
import {
  AttachmentsParamSchema,
  base64Bytes,
  fromRunAttachment,
  imageFromUrl,
  imagesOfEntryMeta,
  MAX_IMAGE_BYTES,
  MAX_IMAGES,
  toRunAttachment,
} from "./image-attachments.js";

const b64 = (n: number) => Buffer.alloc(n, 7).toString("base64");

describe("image attachments", () => {
  it("counts base64 bytes without decoding", () => {
    for (const n of [1, 2, 3, 4, 100]) expect(base64Bytes(b64(n))).toBe(n);
  });

  it("reads https and data: URLs, and says why others are not images", () => {
    expect(imageFromUrl("https://x.example/a.PNG")).toEqual({ type: "image", mimeType: "image/png", url: "https://x.example/a.PNG" });
    expect(imageFromUrl(`data:image/webp;base64,${b64(3)}`)).toEqual({ type: "image", mimeType: "image/webp", data: b64(3) });
    expect(imageFromUrl("http://x.example/a.png")).toMatch(/https/);
    expect(imageFromUrl("data:image/svg+xml;base64,PHN2Zz4=")).toMatch(/not supported/);
    expect(imageFromUrl("data:image/png,rawbytes")).toMatch(/base64/);
    expect(imageFromUrl(`data:image/png;base64,${b64(MAX_IMAGE_BYTES + 1)}`)).toMatch(/at most/);
  });

  it("validates the agent RPC's attachments: one of url and data, the sum of bytes bounded", () => {
    const one = { type: "image", mimeType: "image/png", data: b64(10) };
    expect(AttachmentsParamSchema.parse([one])).toEqual([one]);
    expect(AttachmentsParamSchema.safeParse([{ ...one, url: "https://x.example/a.png" }]).success).toBe(false);
    const half = { type: "image", mimeType: "image/png", data: b64(MAX_IMAGE_BYTES / 2 + 3) };
    expect(AttachmentsParamSchema.safeParse([half, half]).error?.issues[0]?.message).toMatch(/together/);
    expect(AttachmentsParamSchema.safeParse(Array.from({ length: MAX_IMAGES + 1 }, () => one)).success).toBe(false);
  });

  it("round-trips through the run request, and reads back from a session entry's meta", () => {
    const images = [
      { type: "image" as const, mimeType: "image/gif" as const, data: b64(5) },
      { type: "image" as const, mimeType: "image/jpeg" as const, url: "https://x.example/a" },
    ];
    expect(images.map(toRunAttachment).map(fromRunAttachment)).toEqual(images);
    expect(imagesOfEntryMeta(Buffer.from(JSON.stringify({ images, toolCallId: "x" })))).toEqual(images);
    expect(imagesOfEntryMeta(Buffer.from("not json"))).toEqual([]);
    expect(imagesOfEntryMeta(Buffer.alloc(0))).toEqual([]);
  });
});
