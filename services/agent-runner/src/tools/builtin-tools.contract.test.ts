import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { httpFetchTool } from "./http-fetch.js";
import { timeNowTool } from "./time-now.js";
import { toolPortContract } from "./tool-port.contract.js";
import { builtinTool, type Tool } from "./tool-registry.js";

let page: Server;
let url = "";
beforeAll(async () => {
  page = createServer((_req, res) => res.end("a long page ".repeat(200)));
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => page.close(() => resolve())));

const tools: Tool[] = [
  builtinTool(timeNowTool),
  builtinTool(httpFetchTool({ allowHosts: ["127.0.0.1"], allowPrivateNetworks: false, maxBytes: 100_000, timeoutMs: 5_000 })),
];

toolPortContract("built-in tools", () => ({
  source: { tools: () => tools },
  good: { tool: "http.fetch", params: { url }, contains: "a long page" },
  long: { tool: "http.fetch", params: { url } },
  bad: { tool: "http.fetch", params: { url: "ftp://example.com/" } },
}));
