/**
 * Serves fixed files over loopback for tests of "media by URL": platforms that fetch the URL
 * themselves only record it, bridges that take uploads (Signal, BlueBubbles) make the plugin
 * download it, and the test compares the bytes the fake received with these.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeMediaFile {
  contentType: string;
  data: Uint8Array;
}

export interface FakeMediaServer {
  baseUrl: string;
  readonly files: Readonly<Record<string, FakeMediaFile>>;
  url(name: string): string;
  /** Paths fetched, oldest first. */
  readonly fetched: readonly string[];
  close(): Promise<void>;
}

// A 1x1 PNG and a 1x1 GIF, so a plugin that sniffs content sees real images.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);
const GIF = Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");

export const DEFAULT_MEDIA_FILES: Readonly<Record<string, FakeMediaFile>> = {
  "photo.png": { contentType: "image/png", data: new Uint8Array(PNG) },
  "loop.gif": { contentType: "image/gif", data: new Uint8Array(GIF) },
  "report.pdf": { contentType: "application/pdf", data: new TextEncoder().encode("%PDF-1.4\n% fake report\n%%EOF\n") },
};

export async function startFakeMediaServer(files: Record<string, FakeMediaFile> = { ...DEFAULT_MEDIA_FILES }): Promise<FakeMediaServer> {
  const fetched: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://media.invalid").pathname;
    fetched.push(path);
    const file = files[decodeURIComponent(path.replace(/^\/media\//, ""))];
    if (file === undefined || !path.startsWith("/media/")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": file.contentType, "content-length": String(file.data.length) });
    res.end(req.method === "HEAD" ? undefined : Buffer.from(file.data));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    files,
    url: (name) => `${baseUrl}/media/${encodeURIComponent(name)}`,
    fetched,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
