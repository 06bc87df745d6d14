import { createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import {
  encodeJson,
  GatewayError,
  isGatewayError,
  RPC,
  type SessionEntry,
  type SessionsListRequest,
  type SessionsPreviewRequest,
  type SessionSummary,
  sessionPreviewView,
} from "@gw/contracts";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { sessionsTools } from "./sessions-tools.js";
import { type ToolDefinition, ToolRegistry } from "./tool-registry.js";

const SESSION: SessionSummary = {
  key: "webchat:abc",
  agentId: "main",
  model: "builtin/echo",
  thinking: "",
  createdAt: 1_000,
  updatedAt: 2_000,
  messageCount: 2,
};

const ENTRY: SessionEntry = {
  id: "e2",
  parentId: "e1",
  role: "assistant",
  sender: "",
  body: "hello",
  timestamp: 2_000,
  runId: "r1",
  kind: "message",
  metaJson: Buffer.alloc(0),
};

const bus = new InProcessBus();
const subjects = createSubjects("test");
const registry = new ToolRegistry(sessionsTools({ bus, subjects, timeoutMs: 1_000 }) as ToolDefinition[]);
const ctx = { signal: new AbortController().signal, agentId: "main", sessionKey: "webchat:me" };
const listCalls: SessionsListRequest[] = [];
const previewCalls: SessionsPreviewRequest[] = [];

serveRpc(bus, subjects, RPC.sessionsList, (req) => {
  listCalls.push(req);
  return { sessions: [SESSION, { ...SESSION, key: "slack:x", thinking: "high" }], total: 7 };
});
serveRpc(bus, subjects, RPC.sessionsPreview, (req) => {
  previewCalls.push(req);
  if (req.key === "webchat:gone") throw new GatewayError("NOT_FOUND", `unknown session: ${req.key}`);
  return { viewJson: encodeJson(sessionPreviewView(SESSION, [ENTRY])) };
});

async function invalid(name: string, params: unknown): Promise<string> {
  const err = await registry.invoke(name, params, ctx).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGatewayError(err) || err.code !== "INVALID_REQUEST") throw new Error(`expected INVALID_REQUEST, got ${String(err)}`);
  return err.message;
}

beforeEach(() => {
  listCalls.length = 0;
  previewCalls.length = 0;
});
afterAll(() => bus.close());

describe("sessions.list tool", () => {
  it("lists through the sessions service with the WebSocket method's defaults and payload", async () => {
    const result = await registry.invoke("sessions.list", {}, ctx);
    expect(listCalls).toEqual([{ limit: 50, offset: 0 }]);
    const payload = {
      sessions: [
        { key: "webchat:abc", agentId: "main", model: "builtin/echo", createdAt: 1_000, updatedAt: 2_000, messageCount: 2 },
        { key: "slack:x", agentId: "main", model: "builtin/echo", createdAt: 1_000, updatedAt: 2_000, messageCount: 2, thinking: "high" },
      ],
      total: 7,
    };
    expect(result).toEqual({ content: JSON.stringify(payload), ...payload });
    await registry.invoke("sessions.list", { agentId: "ops", limit: 2, offset: 4 }, ctx);
    expect(listCalls.at(-1)).toEqual({ agentId: "ops", limit: 2, offset: 4 });
  });

  it("refuses bad params before calling the sessions service", async () => {
    for (const limit of [0, -1, 1.5, 501, "5", null]) expect(await invalid("sessions.list", { limit })).toMatch(/^params\.limit: /);
    for (const offset of [-1, 2.5, 1_000_001, "0"]) expect(await invalid("sessions.list", { offset })).toMatch(/^params\.offset: /);
    expect(await invalid("sessions.list", { agentId: "Not An Id" })).toMatch(/^params\.agentId: agentId must be lowercase/);
    expect(await invalid("sessions.list", [])).toMatch(/^params: /);
    expect(listCalls).toEqual([]);
  });
});

describe("sessions.preview tool", () => {
  it("previews through the sessions service with the WebSocket method's payload", async () => {
    const result = await registry.invoke("sessions.preview", { key: "webchat:abc", limit: 5 }, ctx);
    expect(previewCalls).toEqual([{ key: "webchat:abc", limit: 5 }]);
    const payload = {
      key: "webchat:abc",
      agentId: "main",
      model: "builtin/echo",
      createdAt: 1_000,
      updatedAt: 2_000,
      messageCount: 2,
      messages: [{ type: "message", id: "e2", parentId: "e1", role: "assistant", sender: "main", body: "hello", timestamp: 2_000, kind: "message" }],
    };
    expect(result).toEqual({ content: JSON.stringify(payload), ...payload });
    await registry.invoke("sessions.preview", { key: "webchat:abc" }, ctx);
    expect(previewCalls.at(-1)).toEqual({ key: "webchat:abc", limit: 20 });
  });

  it("refuses a missing or malformed key and bad limits before calling the sessions service", async () => {
    expect(await invalid("sessions.preview", {})).toMatch(/^params\.key: /);
    for (const key of ["", "nocolon", ":x", "p:a\nb", 42]) expect(await invalid("sessions.preview", { key })).toMatch(/^params\.key: /);
    for (const limit of [0, 201, 3.3, "20"]) expect(await invalid("sessions.preview", { key: "webchat:abc", limit })).toMatch(/^params\.limit: /);
    expect(previewCalls).toEqual([]);
  });

  it("passes the sessions service's typed errors on", async () => {
    await expect(registry.invoke("sessions.preview", { key: "webchat:gone" }, ctx)).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "unknown session: webchat:gone",
    });
  });
});

describe("sessions tools for models", () => {
  it("publish JSON Schemas mirroring the WebSocket params", () => {
    const [list, preview] = registry.specs(["sessions.list", "sessions.preview"]);
    expect(list).toMatchObject({
      name: "sessions__list",
      parameters: {
        type: "object",
        properties: {
          agentId: { type: "string" },
          limit: { type: "integer", minimum: 1, maximum: 500, default: 50 },
          offset: { type: "integer", minimum: 0, default: 0 },
        },
      },
    });
    expect(list!.parameters).not.toHaveProperty("required");
    expect(preview).toMatchObject({
      name: "sessions__preview",
      parameters: { type: "object", required: ["key"], properties: { key: { type: "string" }, limit: { type: "integer", maximum: 200 } } },
    });
  });
});
