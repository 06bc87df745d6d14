import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpClientOptions } from "@gw/http-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpClients, withMediaPolicy } from "./http-clients.js";

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((_req, res) => res.end("media"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a.png`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("withMediaPolicy", () => {
  it("lets plugin clients download from the hosts delivery.media allows, and nowhere else", async () => {
    const clients = new HttpClients();
    const open = withMediaPolicy(clients.factory, { allowHosts: ["127.0.0.1"] })({ name: "bridge", baseUrl: "http://bridge.invalid" });
    const strict = withMediaPolicy(clients.factory, { allowHosts: [] })({ name: "bridge", baseUrl: "http://bridge.invalid" });
    expect((await open.download(url, { maxBytes: 100 })).bytes.toString()).toBe("media");
    await expect(strict.download(url, { maxBytes: 100 })).rejects.toMatchObject({ kind: "ssrf" });
    await clients.close();
  });

  it("keeps a policy the plugin names itself", () => {
    const seen: HttpClientOptions[] = [];
    const factory = withMediaPolicy((opts) => (seen.push(opts), undefined as never), { allowHosts: ["a"] });
    factory({ name: "x" });
    factory({ name: "y", ssrf: { allowPrivateNetworks: true } });
    expect(seen.map((o) => o.ssrf)).toEqual([{ allowHosts: ["a"] }, { allowPrivateNetworks: true }]);
  });
});
