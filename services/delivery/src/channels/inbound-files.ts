import type { FetchedFile, InboundFiles } from "@gw/channels";
import { ChannelError } from "@gw/channels";
import { type HttpClient, HttpError } from "@gw/http-client";
import { channelErrorFromHttp } from "./http-channel-error.js";

/**
 * Reads the file at `url` with `client` (a plugin's own: SSRF-guarded, its secrets scrubbed from
 * errors), at most `maxBytes`: `too_large` past them, a ChannelError for any other failure.
 */
export async function fetchFile(
  client: HttpClient,
  url: string,
  opts: { maxBytes: number; signal: AbortSignal; headers?: Record<string, string> },
): Promise<FetchedFile> {
  try {
    const got = await client.download(url, { maxBytes: opts.maxBytes, signal: opts.signal, ...(opts.headers ? { headers: opts.headers } : {}) });
    const type = got.headers["content-type"];
    return { kind: "file", bytes: got.bytes, mimeType: (Array.isArray(type) ? type[0] : type) ?? "application/octet-stream" };
  } catch (err) {
    if (err instanceof HttpError && err.kind === "too_large") return { kind: "too_large" };
    throw channelErrorFromHttp(err);
  }
}

/**
 * The files of a platform that serves them at a URL needing no credential of ours (Discord's
 * CDN): read through the plugin's SSRF-guarded client, which sends no token off the API's origin.
 */
export function urlFiles(client: HttpClient): InboundFiles {
  return {
    fetch: async (attachment, opts) => {
      if (attachment.url === undefined) throw new ChannelError("rejected", "the platform gave no URL for the file");
      return fetchFile(client, attachment.url, opts);
    },
  };
}

/**
 * The files a bridge keeps under their id (signal-cli-rest-api's `/v1/attachments/<id>`): read
 * below the bridge's own base URL with its client, so its credentials go nowhere else.
 */
export function bridgeFiles(client: HttpClient, pathOf: (id: string) => string): InboundFiles {
  return {
    fetch: async (attachment, opts) => {
      if (attachment.id === undefined || attachment.id === "") throw new ChannelError("rejected", "the bridge gave no id for the file");
      return fetchFile(client, pathOf(encodeURIComponent(attachment.id)), opts);
    },
  };
}
