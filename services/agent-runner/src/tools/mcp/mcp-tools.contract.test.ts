import { createLogger } from "@gw/runtime";
import { everythingMcpServer, type FakeMcpHttpServer, startFakeMcpHttpServer, waitFor } from "@gw/testing";
import { afterAll, beforeAll } from "vitest";
import { toolPortContract } from "../tool-port.contract.js";
import { McpServers } from "./mcp-servers.js";

const logger = createLogger({ service: "test", level: "silent" });
const server = { args: [], env: {}, headers: {}, allowHosts: [], timeoutMs: 10_000, allowTools: ["*"], denyTools: [] };

let stdio: McpServers;
let http: McpServers;
let fake: FakeMcpHttpServer;

beforeAll(async () => {
  fake = await startFakeMcpHttpServer();
  stdio = new McpServers({ servers: { everything: { ...server, ...everythingMcpServer() } } }, { logger });
  http = new McpServers({ servers: { web: { ...server, args: [], url: fake.url, allowHosts: ["127.0.0.1"] } } }, { logger });
  stdio.start();
  http.start();
  const up = () => stdio.status()[0]?.state === "connected" && http.status()[0]?.state === "connected";
  await waitFor(() => (up() ? true : undefined), { timeoutMs: 20_000, what: "both MCP servers connected" });
});
afterAll(async () => {
  await stdio?.stop();
  await http?.stop();
  await fake?.close();
});

toolPortContract("MCP over stdio (@modelcontextprotocol/server-everything)", () => ({
  source: stdio,
  good: { tool: "everything.echo", params: { message: "contract says hi" }, contains: "Echo: contract says hi" },
  long: { tool: "everything.echo", params: { message: "a long echo ".repeat(200) } },
  bad: { tool: "everything.echo", params: { message: 42 } },
}));

toolPortContract("MCP over Streamable HTTP", () => ({
  source: http,
  good: { tool: "web.greet", params: { name: "Ada" }, contains: "Hello, Ada!" },
  long: { tool: "web.greet", params: { name: "a long name ".repeat(200) } },
  bad: { tool: "web.greet", params: { name: ["not", "a", "string"] } },
}));
