import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * How to start the MCP project's own "everything" server (`@modelcontextprotocol/server-everything`,
 * from npm) on stdio: this Node, its entry script, `stdio`.
 */
export function everythingMcpServer(): { command: string; args: string[] } {
  const pkg = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
  return { command: process.execPath, args: [join(dirname(pkg), "dist", "index.js"), "stdio"] };
}

/**
 * A Streamable HTTP MCP server for tests, built on the SDK's server side: one McpServer per
 * client session, each with the same tools.
 * - `greet {name}`   "Hello, <name>!"
 * - `stall {}`       answers only when the client gives up (timeout tests)
 * - `secret-op {}`   "secret done" (tests exclude it with allowTools/denyTools)
 * `addTool(name)` registers `<name> {}` answering "<name> added" on every session, which sends
 * `notifications/tools/list_changed`. Every request's headers are kept in `headers`.
 */
export interface FakeMcpHttpServer {
  url: string;
  /** Request headers seen, oldest first. */
  headers: IncomingMessage["headers"][];
  /** Calls of `stall` that have started. */
  stalls: number;
  addTool(name: string): void;
  close(): Promise<void>;
}

export async function startFakeMcpHttpServer(): Promise<FakeMcpHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const extra: string[] = [];
  const state = { stalls: 0 };
  const headers: IncomingMessage["headers"][] = [];

  const registerExtra = (server: McpServer, name: string) =>
    server.registerTool(name, { description: `Added at run time: ${name}`, inputSchema: {} }, () => ({
      content: [{ type: "text", text: `${name} added` }],
    }));

  function newServer(): McpServer {
    const server = new McpServer({ name: "fake-http", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool("greet", { description: "Greets someone by name", inputSchema: { name: z.string() } }, ({ name }) => ({
      content: [{ type: "text", text: `Hello, ${name}!` }],
    }));
    server.registerTool("stall", { description: "Never answers", inputSchema: {} }, (_args, extraInfo) => {
      state.stalls++;
      return new Promise((resolve) => extraInfo.signal.addEventListener("abort", () => resolve({ content: [] })));
    });
    server.registerTool("secret-op", { description: "Not for agents", inputSchema: {} }, () => ({
      content: [{ type: "text", text: "secret done" }],
    }));
    for (const name of extra) registerExtra(server, name);
    servers.push(server);
    return server;
  }

  const http: Server = createServer((req, res) => {
    headers.push(req.headers);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (transport === undefined) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            sessions.set(sid, transport!);
          },
        });
        newServer()
          .connect(transport)
          .then(() => transport!.handleRequest(req, res, body))
          .catch(() => res.destroy());
        return;
      }
      transport.handleRequest(req, res, body).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    get stalls() {
      return state.stalls;
    },
    addTool(name) {
      extra.push(name);
      for (const server of servers) registerExtra(server, name);
    },
    async close() {
      await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
