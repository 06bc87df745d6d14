import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ChannelError } from "@gw/channels";
import { createHttpClient } from "@gw/http-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchMedia } from "./bridge-media.js";

/** path -> [status, headers, body] */
const ROUTES: Record<string, [number, Record<string, string>, string]> = {
  "/files/Quarterly%20report%20(final).pdf": [200, { "content-type": "application/pdf; charset=binary" }, "%PDF"],
  "/download?id=7": [200, { "content-type": "application/octet-stream", "content-disposition": 'attachment; filename="cat photo.JPG"' }, "jpeg"],
  "/blob": [200, { "content-type": "image/png" }, "png"],
  "/": [200, {}, "bytes"],
  "/empty": [200, { "content-type": "image/png" }, ""],
  "/busy": [503, {}, "later"],
};

let server: Server;
let base: string;
const client = createHttpClient({ name: "bridge", ssrf: { allowHosts: ["127.0.0.1"] } });
const limits = { maxBytes: 1_000, timeoutMs: 2_000 };
const fetch = (path: string, n = 1) => fetchMedia(client, `${base}${path}`, n, limits, AbortSignal.timeout(2_000));

beforeAll(async () => {
  server = createServer((req, res) => {
    const [status, headers, body] = ROUTES[req.url ?? ""] ?? [404, {}, "no"];
    res.writeHead(status, headers).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

describe("fetchMedia", () => {
  it("names a file by its URL, made safe for data URIs and file systems", async () => {
    const file = await fetch("/files/Quarterly%20report%20(final).pdf");
    expect(file).toEqual({ bytes: Buffer.from("%PDF"), contentType: "application/pdf", filename: "Quarterly_report_final_.pdf" });
  });

  it("prefers Content-Disposition, and guesses an octet-stream's type from its extension", async () => {
    expect(await fetch("/download?id=7")).toMatchObject({ contentType: "image/jpeg", filename: "cat_photo.JPG" });
  });

  it("gives a name without extension one from the content type, and a nameless file a numbered name", async () => {
    expect((await fetch("/blob")).filename).toBe("blob.png");
    expect(await fetch("/", 3)).toMatchObject({ contentType: "application/octet-stream", filename: "attachment-3" });
  });

  it("refuses empty and missing files, and calls a failing media host unavailable", async () => {
    const kinds = [];
    for (const path of ["/empty", "/nope", "/busy"]) {
      const err = await fetch(path, 2).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as ChannelError).message).toMatch(/^medium 2 /);
      kinds.push((err as ChannelError).kind);
    }
    expect(kinds).toEqual(["rejected", "rejected", "unavailable"]);
  });
});
