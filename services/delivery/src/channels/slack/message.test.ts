import { describe, expect, it } from "vitest";
import { escapeText, isImageUrl, mediaBlock, mediaFallback } from "./message.js";

describe("slack message parts", () => {
  it("escapes exactly what Slack reads as markup", () => {
    expect(escapeText("a < b && c > d <!channel> *bold*")).toBe("a &lt; b &amp;&amp; c &gt; d &lt;!channel&gt; *bold*");
    expect(escapeText("&amp;")).toBe("&amp;amp;");
  });

  it("takes PNG, JPEG and GIF URLs as images, by extension only", () => {
    expect(isImageUrl("https://cdn.example/a/B.PNG?x=1")).toBe(true);
    expect(isImageUrl("https://cdn.example/a.jpeg")).toBe(true);
    expect(isImageUrl("https://cdn.example/a.gif#frag")).toBe(true);
    expect(isImageUrl("https://cdn.example/a.webp")).toBe(false);
    expect(isImageUrl("https://cdn.example/image")).toBe(false);
    expect(isImageUrl("https://cdn.example/.png")).toBe(false);
  });

  it("makes an image block with the file name as alt text", () => {
    expect(mediaBlock("https://cdn.example/media/cat%20photo.jpg")).toEqual({
      type: "image",
      image_url: "https://cdn.example/media/cat%20photo.jpg",
      alt_text: "cat photo.jpg",
    });
    expect(mediaBlock("https://cdn.example/.gif")).toMatchObject({ type: "section" });
  });

  it("links anything else, keeping the link whole whatever the URL holds", () => {
    expect(mediaBlock("https://cdn.example/r.pdf?a=1&b=x|y")).toEqual({
      type: "section",
      text: { type: "mrkdwn", text: "<https://cdn.example/r.pdf?a=1&amp;b=x%7Cy|r.pdf>" },
    });
    expect(mediaBlock("https://cdn.example/")).toEqual({ type: "section", text: { type: "mrkdwn", text: "<https://cdn.example/|file>" } });
  });

  it("names the files for a media-only message's notification", () => {
    expect(mediaFallback(["https://cdn.example/a.png", "https://cdn.example/", "https://cdn.example/x&y.pdf"])).toBe("a.png, file, x&amp;y.pdf");
  });
});
