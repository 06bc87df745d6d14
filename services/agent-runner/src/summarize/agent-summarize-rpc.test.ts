import { callRpc, createSubjects, InProcessBus } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { type AgentSummarizeRequest, RPC, type SessionEntry } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { type FakeModelServer, freePort, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentDirectory } from "../agent-directory.js";
import { ProviderRegistry } from "../providers/provider-registry.js";
import { serveAgentSummarize } from "./agent-summarize-rpc.js";

const entry = (role: string, body: string): SessionEntry => ({
  id: "",
  parentId: "",
  role,
  sender: "",
  body,
  timestamp: 0,
  runId: "",
  kind: "message",
  metaJson: Buffer.alloc(0),
});

const ENTRIES = [entry("user", "Plan the offsite for March."), entry("assistant", "Berlin or Lisbon?"), entry("user", "Lisbon.")];

describe("RPC.agentSummarize", () => {
  let fake: FakeModelServer;
  const bus = new InProcessBus();
  const subjects = createSubjects("test");
  const request = (req: Partial<AgentSummarizeRequest>) =>
    callRpc(bus, subjects, RPC.agentSummarize, { agentId: "oa", model: "", sessionKey: "web:s", entries: ENTRIES, maxChars: 0, ...req }, { timeoutMs: 5_000 });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    const config = defaultConfig({
      agents: {
        default: "main",
        list: [
          { id: "main", name: "Main", model: "builtin/echo" },
          { id: "oa", name: "OpenAI", model: "fake-openai/gpt-test", tools: ["time.now"] },
          { id: "down", name: "Down", model: "dead/gpt-test" },
        ],
      },
      models: {
        providers: {
          "fake-openai": { kind: "openai", baseUrl: fake.baseUrl, timeoutMs: 2_000 },
          "fake-anthropic": { kind: "anthropic", baseUrl: fake.baseUrl, timeoutMs: 2_000 },
          dead: { kind: "openai", baseUrl: `http://127.0.0.1:${await freePort()}/v1`, timeoutMs: 2_000 },
        },
      },
    });
    serveAgentSummarize({
      bus,
      subjects,
      directory: new AgentDirectory(config.agents),
      providers: new ProviderRegistry(config.models, { retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } }),
      logger: createLogger({ service: "test", level: "silent" }),
    });
  });
  afterAll(async () => {
    await bus.close();
    await fake?.close();
  });

  it("asks the agent's model for a summary of the transcript, without tools", async () => {
    const before = fake.requests.length;
    expect(await request({})).toEqual({ summary: "Fake summary of 3 transcript lines." });
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body as { model: string; tools?: unknown; messages: Array<{ role: string; content: string }> };
    expect(body.model).toBe("gpt-test");
    expect(body.tools).toBeUndefined();
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(body.messages[0]!.content).toContain("at most 4000 characters");
    expect(body.messages[1]!.content).toContain("user: Plan the offsite for March.\nassistant: Berlin or Lisbon?\nuser: Lisbon.");
  });

  it("uses the model the request names over the agent's, and truncates to maxChars at a word", async () => {
    const before = fake.requests.length;
    expect(await request({ model: "fake-anthropic/claude-test", maxChars: 20 })).toEqual({ summary: "Fake summary of 3…" });
    expect(fake.requests.slice(before).map((r) => [r.api, r.body.model])).toEqual([["anthropic", "claude-test"]]);
    expect(String(fake.requests.at(-1)!.body.system)).toContain("at most 20 characters");
  });

  it("refuses builtin models, so compaction keeps its extractive summary", async () => {
    await expect(request({ agentId: "main" })).rejects.toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/builtin\/echo cannot summarise/) });
    await expect(request({ agentId: "oa", model: "builtin/echo" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("answers typed errors for unknown agents, unknown providers and failing providers", async () => {
    await expect(request({ agentId: "ghost" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(request({ model: "nowhere/x" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(request({ agentId: "down" })).rejects.toMatchObject({ code: "MODEL_ERROR", message: expect.stringMatching(/cannot reach dead .*after 2 attempts/) });
  });
});
