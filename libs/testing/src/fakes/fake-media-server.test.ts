import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeMediaServer, startFakeMediaServer } from "./fake-media-server.js";

describe("fake media server", () => {
  let media: FakeMediaServer;
  beforeAll(async () => {
    media = await startFakeMediaServer();
  });
  afterAll(() => media.close());

  it("serves its files with their content type and records fetches", async () => {
    const res = await fetch(media.url("photo.png"));
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(media.files["photo.png"]!.data);
    expect(media.fetched).toContain("/media/photo.png");
    expect((await fetch(media.url("missing.png"))).status).toBe(404);
  });
});
