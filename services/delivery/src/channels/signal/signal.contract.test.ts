import { describeChannelContract } from "@gw/channels/contract";
import { createHttpClient, type HttpClient } from "@gw/http-client";
import { DEFAULT_MEDIA_FILES, DEFAULT_SIGNAL_ACCOUNTS, startFakeMediaServer, startFakeSignal } from "@gw/testing";
import { DEFAULT_MEDIA_LIMITS, type HttpClientFactory } from "../registry.js";
import { signalPlugin } from "./plugin.js";

/** Each account reaches the bridge through a basic-auth proxy, so there are credentials to keep out of errors. */
const PROXY_PASSWORDS = ["proxy-secret-one", "proxy-secret-two"] as const;
/** A person writing to the first account. */
const PERSON = "+15557654321";

describeChannelContract("signal", async () => {
  // native mode: its receive endpoint keeps messages until read (json-rpc mode is refused for inbound).
  const fake = await startFakeSignal({ mode: "native" });
  const media = await startFakeMediaServer();
  const clients: HttpClient[] = [];
  // The media server is on loopback: this test's factory lets downloads reach it.
  const http: HttpClientFactory = (opts) => {
    const client = createHttpClient({ ...opts, secrets: [...(opts.secrets ?? []), ...PROXY_PASSWORDS], ssrf: { allowHosts: ["127.0.0.1"] } });
    clients.push(client);
    return client;
  };
  const account = (i: 0 | 1) => {
    const number = DEFAULT_SIGNAL_ACCOUNTS[i]!;
    const bridgeUrl = fake.baseUrl.replace("http://", `http://gateway:${PROXY_PASSWORDS[i]}@`);
    const adapter = signalPlugin.create({
      channelId: "signal",
      accountId: `a${i}`,
      settings: { bridgeUrl, number, dmPolicy: "pairing", allowFrom: [], inbound: "off" },
      http,
      media: DEFAULT_MEDIA_LIMITS,
    });
    return { adapter, identity: number };
  };
  // The first account again, reading the bridge's receive endpoint.
  const reader = signalPlugin.create({
    channelId: "signal",
    accountId: "reader",
    settings: { bridgeUrl: fake.baseUrl, number: DEFAULT_SIGNAL_ACCOUNTS[0]!, dmPolicy: "pairing", allowFrom: [], inbound: "receive" },
    http,
    media: DEFAULT_MEDIA_LIMITS,
  });
  return {
    fake,
    accounts: [account(0), account(1)],
    recipient: { to: "+1 555 765 4321", chat: "+15557654321" },
    threadId: "1700000000123",
    inbound: {
      receiver: { adapter: reader, write: (text) => void fake.userWrites({ from: PERSON, text }) },
      from: { chat: PERSON, sender: PERSON },
    },
    invalidRecipients: ["", "15557654321", "+0123", "alice", "group.", "group.YWJj", "+1555765432100000"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [DEFAULT_MEDIA_FILES["photo.png"]!.data, DEFAULT_MEDIA_FILES["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({
      method: "POST",
      path: "/v2/send",
      body: { number: DEFAULT_SIGNAL_ACCOUNTS[0], recipients: ["+15557654321"], message: text },
    }),
    secrets: PROXY_PASSWORDS,
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await fake.close();
      await media.close();
    },
  };
});
