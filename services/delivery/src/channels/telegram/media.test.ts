import { describe, expect, it } from "vitest";
import { fileNameOf, kindFromContentType, kindFromUrl, planAlbums, sendableByUrl, type TelegramMediaKind } from "./media.js";

const kinds = (...list: TelegramMediaKind[]) => list.map((kind, i) => ({ kind, i }));
const shape = (albums: Array<Array<{ i: number }>>) => albums.map((album) => album.map((m) => m.i));

describe("telegram media kinds", () => {
  it("reads the kind from the URL's extension, case and query aside", () => {
    expect(kindFromUrl("https://cdn.example/a/Photo.JPG?size=large", false)).toBe("photo");
    expect(kindFromUrl("https://cdn.example/clip.mp4", false)).toBe("video");
    expect(kindFromUrl("https://cdn.example/song.mp3", false)).toBe("audio");
    expect(kindFromUrl("https://cdn.example/report.pdf", false)).toBe("document");
    expect(kindFromUrl("https://cdn.example/loop.gif", false)).toBe("animation");
    expect(kindFromUrl("https://cdn.example/download", false)).toBeUndefined();
    expect(kindFromUrl("https://cdn.example/.hidden", false)).toBeUndefined();
    expect(kindFromUrl("https://cdn.example/script.php", false)).toBeUndefined();
  });

  it("plays an MP4 as a looping animation only with gifPlayback; a photo stays a photo", () => {
    expect(kindFromUrl("https://cdn.example/clip.mp4", true)).toBe("animation");
    expect(kindFromUrl("https://cdn.example/a.png", true)).toBe("photo");
    expect(kindFromContentType("video/mp4", true)).toBe("animation");
    expect(kindFromContentType("video/mp4", false)).toBe("video");
  });

  it("reads the kind from a Content-Type, anything unknown being a document", () => {
    expect(kindFromContentType("image/PNG; charset=binary", false)).toBe("photo");
    expect(kindFromContentType("image/gif", false)).toBe("animation");
    expect(kindFromContentType("audio/mpeg", false)).toBe("audio");
    expect(kindFromContentType("text/plain", false)).toBe("document");
    expect(kindFromContentType(undefined, false)).toBe("document");
  });

  it("fetches documents by URL only where Telegram does: GIF, PDF and ZIP", () => {
    expect(sendableByUrl("document", "https://cdn.example/r.pdf")).toBe(true);
    expect(sendableByUrl("document", "https://cdn.example/r.ZIP")).toBe(true);
    expect(sendableByUrl("document", "https://cdn.example/notes.txt")).toBe(false);
    expect(sendableByUrl("photo", "https://cdn.example/p.png")).toBe(true);
  });

  it("names an upload after the URL's last segment, decoded", () => {
    expect(fileNameOf("https://cdn.example/media/my%20report.pdf")).toBe("my report.pdf");
    expect(fileNameOf("https://cdn.example/")).toBe("");
    expect(fileNameOf("not a url")).toBe("");
  });
});

describe("telegram albums", () => {
  it("groups photos with videos, keeps documents and audio to themselves, sends animations alone", () => {
    const media = kinds("photo", "video", "document", "document", "audio", "animation", "photo", "animation", "animation");
    expect(shape(planAlbums(media))).toEqual([[0, 1], [2, 3], [4], [5], [6], [7], [8]]);
  });

  it("keeps the order even when it costs an album", () => {
    expect(shape(planAlbums(kinds("photo", "document", "photo")))).toEqual([[0], [1], [2]]);
  });

  it("starts a new album after ten", () => {
    const albums = planAlbums(kinds(...Array<TelegramMediaKind>(23).fill("photo")));
    expect(albums.map((a) => a.length)).toEqual([10, 10, 3]);
  });

  it("makes nothing of nothing", () => {
    expect(planAlbums([])).toEqual([]);
  });
});
