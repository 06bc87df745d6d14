import { describe, expect, it } from "vitest";
import { attachmentLabel, imageSource } from "./message-view.js";

describe("imageSource", () => {
  it("shows inline raster images, given as a data: URL or as base64 data with its type", () => {
    expect(imageSource({ type: "image", url: "data:image/png;base64,iVBORw0KGgo=" })).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(imageSource({ type: "image", data: "R0lGODlh", mimeType: "image/gif" })).toBe("data:image/gif;base64,R0lGODlh");
  });

  it("loads nothing from elsewhere and nothing that can hold script", () => {
    for (const url of ["https://tracker.example/p.png", "data:image/svg+xml;base64,PHN2Zz4=", "javascript:alert(1)", "data:text/html;base64,PGI+"]) {
      expect(imageSource({ type: "image", url }), url).toBeUndefined();
    }
    expect(imageSource({ type: "image", data: "x", mimeType: "image/svg+xml" })).toBeUndefined();
    expect(imageSource({ type: "image", data: '"><script>', mimeType: "image/png" })).toBeUndefined();
    expect(imageSource({ type: "image" })).toBeUndefined();
  });
});

describe("attachmentLabel", () => {
  it("names an attachment by its type, MIME type and size, or the host of its URL", () => {
    expect(attachmentLabel({ type: "image", mimeType: "image/jpeg", size: 1_536 })).toBe("image (image/jpeg, 1.5 KB)");
    expect(attachmentLabel({ type: "image", mimeType: "image/png", size: 900 })).toBe("image (image/png, 900 B)");
    expect(attachmentLabel({ type: "image", mimeType: "image/png", url: "https://cdn.example/a.png" })).toBe("image (image/png, cdn.example)");
    expect(attachmentLabel({ type: "image", url: "not a url" })).toBe("image");
  });
});
