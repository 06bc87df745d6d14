import type { HttpClient } from "@gw/http-client";
import { describe, expect, it } from "vitest";
import { SlackApi } from "./api.js";
import { SlackFiles } from "./inbound-files.js";

/** A client that records where downloads go and with which headers. */
function recordingClient(calls: Array<{ url: string; headers?: Record<string, string> }>): HttpClient {
  const download = async (url: string, opts: { headers?: Record<string, string> }) => {
    calls.push({ url, ...(opts.headers ? { headers: opts.headers } : {}) });
    return { status: 200, headers: { "content-type": "image/png" }, url, bytes: Buffer.from("x") };
  };
  return { download } as unknown as HttpClient;
}

const opts = { maxBytes: 100, signal: new AbortController().signal };

describe("SlackFiles", () => {
  it("sends the bot token only to Slack's hosts or the API's own origin", async () => {
    const calls: Array<{ url: string; headers?: Record<string, string> }> = [];
    const files = new SlackFiles(new SlackApi(recordingClient(calls)), { apiBaseUrl: "http://127.0.0.1:9999/api", botToken: "xoxb-t" });
    await files.fetch({ kind: "image", url: "https://files.slack.com/files-pri/T1-F1/a.png" }, opts);
    await files.fetch({ kind: "image", url: "http://127.0.0.1:9999/files-pri/T1-F2/b.png" }, opts);
    expect(calls.map((c) => [c.url, c.headers?.authorization])).toEqual([
      ["https://files.slack.com/files-pri/T1-F1/a.png", "Bearer xoxb-t"],
      ["http://127.0.0.1:9999/files-pri/T1-F2/b.png", "Bearer xoxb-t"],
    ]);
    for (const url of ["https://evil.example/a.png", "http://files.slack.com/a.png", "https://slack.com.evil.example/a.png", "not a url"]) {
      await expect(files.fetch({ kind: "image", url }, opts)).rejects.toMatchObject({ kind: "rejected" });
    }
    await expect(files.fetch({ kind: "image" }, opts)).rejects.toMatchObject({ kind: "rejected" });
    expect(calls).toHaveLength(2);
  });
});
