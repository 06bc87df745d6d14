import { describeChannelContract } from "@gw/channels/contract";
import { createHttpClient, type HttpClient } from "@gw/http-client";
import { blueBubblesNewMessage, DEFAULT_BLUEBUBBLES_SERVERS, DEFAULT_MEDIA_FILES, startFakeBlueBubbles, startFakeMediaServer } from "@gw/testing";
import { expect } from "vitest";
import { rawRequest } from "../contract-helpers.js";
import { DEFAULT_MEDIA_LIMITS, type HttpClientFactory } from "../registry.js";
import { imessagePlugin } from "./plugin.js";

const PASSWORDS = DEFAULT_BLUEBUBBLES_SERVERS.map((s) => s.password);
/** A person writing to the Mac's account in a one-to-one chat. */
const PERSON = "+15557654321";
const CHAT = `iMessage;-;${PERSON}`;

/** A BlueBubbles webhook request: the server's password in the URL's query. */
function webhook(body: string, password: string): ReturnType<typeof rawRequest> {
  return rawRequest({ headers: { "content-type": "application/json" }, body }, { query: { password } });
}

describeChannelContract("imessage", async () => {
  const fake = await startFakeBlueBubbles();
  const media = await startFakeMediaServer();
  const clients: HttpClient[] = [];
  // Every account's client scrubs every account's password (as delivery's factory does), and
  // may download from the loopback media server.
  const http: HttpClientFactory = (opts) => {
    const client = createHttpClient({ ...opts, secrets: [...(opts.secrets ?? []), ...PASSWORDS], ssrf: { allowHosts: ["127.0.0.1"] } });
    clients.push(client);
    return client;
  };
  const account = (i: 0 | 1) => {
    const server = DEFAULT_BLUEBUBBLES_SERVERS[i]!;
    const adapter = imessagePlugin.create({
      channelId: "imessage",
      accountId: server.name,
      settings: { bridgeUrl: fake.baseUrl, password: server.password, privateApi: false, dmPolicy: "pairing", allowFrom: [] },
      http,
      media: DEFAULT_MEDIA_LIMITS,
    });
    return { adapter, identity: server.name };
  };
  return {
    fake,
    accounts: [account(0), account(1)],
    recipient: { to: "+1 555 765 4321", chat: "iMessage;-;+15557654321" },
    threadId: "5E3B6C1A-7F0D-4C3B-9D64-2A1F0B9E8C77",
    inbound: (() => {
      const message = (text: string) => JSON.stringify(blueBubblesNewMessage({ chatGuid: CHAT, from: PERSON, text }));
      const hooked = account(0).adapter;
      return {
        webhook: {
          adapter: hooked,
          request: (text: string) => webhook(message(text), PASSWORDS[0]!),
          forged: (text: string) => webhook(message(text), "not-the-password"),
          malformed: () => webhook("{not json", PASSWORDS[0]!),
        },
        from: { chat: CHAT, sender: PERSON },
      };
    })(),
    invalidRecipients: ["", "15557654321", "+0123", "someone", "a@b", "iMessage;-;", "Telegram;-;+15557654321"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [DEFAULT_MEDIA_FILES["photo.png"]!.data, DEFAULT_MEDIA_FILES["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({
      method: "POST",
      path: "/api/v1/message/text",
      body: { chatGuid: "iMessage;-;+15557654321", message: text, method: "apple-script", tempGuid: expect.stringMatching(/^gw-[0-9a-f]{32}$/) },
    }),
    secrets: PASSWORDS,
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await fake.close();
      await media.close();
    },
  };
});
