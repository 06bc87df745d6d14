import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callRpc, createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { decodeClientEvent, decodeJson, type NewSessionEntry, RPC, SessionChangesSchema } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileSessionRepository } from "./files/file-repository.js";
import { startSessionsService } from "./service.js";

const config = defaultConfig({
  agents: {
    default: "main",
    list: [
      { id: "main", name: "Main", model: "builtin/echo" },
      { id: "smart", name: "Smart", model: "openai/gpt-4o-mini" },
    ],
  },
  models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:9/v1" } } },
});
const logger = createLogger({ service: "test", level: "silent" });
const subjects = createSubjects();
const user = (body: string): NewSessionEntry => ({ role: "user", sender: "u", body, runId: "", metaJson: Buffer.alloc(0) });

describe("sessions service over the bus", () => {
  let dir: string;
  let bus: InProcessBus;
  let repo: FileSessionRepository;
  let events: Array<{ event: string; payload: unknown }>;
  const call = <Req, Res>(def: Parameters<typeof callRpc<Req, Res>>[2], req: Req) =>
    callRpc(bus, subjects, def, req, { timeoutMs: 5_000 });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-sessions-svc-"));
    bus = new InProcessBus();
    repo = await FileSessionRepository.open(dir);
    startSessionsService({ config, bus, subjects, repo, logger });
    events = [];
    bus.subscribe(subjects.broadcast("session"), (data) => {
      const e = decodeClientEvent(data);
      events.push({ event: e.event, payload: JSON.parse(Buffer.from(e.payloadJson).toString()) });
    });
  });
  afterEach(async () => {
    await bus.close();
    await repo.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a run's history read (create) that a delete overtakes starts the key's next session instead of failing NOT_FOUND", async () => {
    await call(RPC.sessionsAppend, { key: "web:raced", agentId: "", entries: [user("old")] });
    // The delete lands between the read's lookup and its read of the entries.
    const tail = repo.tail.bind(repo);
    let raced = false;
    repo.tail = async (meta, limit) => {
      if (!raced) {
        raced = true;
        await repo.delete("web:raced");
      }
      return tail(meta, limit);
    };
    const res = await call(RPC.sessionsHistory, { key: "web:raced", agentId: "smart", limit: 5, create: true });
    expect(raced).toBe(true);
    expect(res).toMatchObject({ created: true, entries: [], session: { key: "web:raced", agentId: "smart" } });
    // Without create it is NOT_FOUND as before.
    repo.tail = async (meta, limit) => {
      await repo.delete("web:raced");
      return tail(meta, limit);
    };
    await expect(call(RPC.sessionsHistory, { key: "web:raced", agentId: "", limit: 5, create: false })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("appends, creates on first use once, and reads history oldest first", async () => {
    const first = await call(RPC.sessionsAppend, { key: "web:a", agentId: "", entries: [user("1"), user("2")] });
    expect(first.created).toBe(true);
    expect(first.entries.map((e) => e.parentId)).toEqual(["", first.entries[0]!.id]);
    const second = await call(RPC.sessionsAppend, { key: "web:a", agentId: "", entries: [user("3")] });
    expect(second).toMatchObject({ created: false, session: { messageCount: 3, agentId: "main" } });
    const history = await call(RPC.sessionsHistory, { key: "web:a", agentId: "", limit: 2, create: false });
    expect(history.entries.map((e) => e.body)).toEqual(["2", "3"]);
    await bus.flush();
    expect(events).toEqual([{ event: "session.created", payload: { key: "web:a", agentId: "main" } }]);
  });

  it("patches only the fields given, and reads the \"\" an older edge sends for a field it did not give as absent", async () => {
    await call(RPC.sessionsAppend, { key: "web:p", agentId: "", entries: [] });
    const fresh = await call(RPC.sessionsPatch, { key: "web:p", thinking: "high" });
    expect(decodeJson(fresh.changesJson, SessionChangesSchema, "changes")).toEqual({ thinking: "high" });
    const older = await call(RPC.sessionsPatch, { key: "web:p", agentId: "", model: "", thinking: "low" });
    expect(decodeJson(older.changesJson, SessionChangesSchema, "changes")).toEqual({ thinking: "low" });
    expect(older.session).toMatchObject({ agentId: "main", thinking: "low" });
  });

  it("creates on history(create) and answers NOT_FOUND without it", async () => {
    await expect(call(RPC.sessionsHistory, { key: "web:new", agentId: "", limit: 0, create: false })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const res = await call(RPC.sessionsHistory, { key: "web:new", agentId: "smart", limit: 0, create: true });
    expect(res).toMatchObject({ created: true, entries: [], session: { agentId: "smart", model: "openai/gpt-4o-mini" } });
  });

  it("validates what the edge validates, for callers on the bus", async () => {
    const bad = [
      call(RPC.sessionsAppend, { key: "nocolon", agentId: "", entries: [] }),
      call(RPC.sessionsAppend, { key: "web:x", agentId: "", entries: [{ ...user("x"), role: "robot" }] }),
      call(RPC.sessionsList, { limit: 501, offset: 0 }),
      call(RPC.sessionsPreview, { key: "web:x", limit: 201 }),
      call(RPC.sessionsPatch, { key: "web:x", thinking: "extended" }),
      // Well formed, but no provider "nosuch" is configured: every run would fail on it.
      call(RPC.sessionsPatch, { key: "web:x", model: "nosuch/x" }),
    ];
    for (const p of bad) await expect(p).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(call(RPC.sessionsAppend, { key: "web:x", agentId: "ghost", entries: [] })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("summarises through the runner for real models and falls back to the extractive summary", async () => {
    await call(RPC.sessionsAppend, { key: "web:s", agentId: "smart", entries: Array.from({ length: 12 }, (_, i) => user(`line ${i}. ${"More words. ".repeat(5)}`)) });
    // No runner serves agent.summarize yet: the extractive summary is used.
    await call(RPC.sessionsCompact, { key: "web:s" });
    let history = await call(RPC.sessionsHistory, { key: "web:s", agentId: "", limit: 0, create: false });
    expect(history.entries[0]).toMatchObject({ kind: "summary", body: expect.stringMatching(/^Summary of 4 earlier messages:/) });
    const seen: number[] = [];
    serveRpc(bus, subjects, RPC.agentSummarize, (req) => {
      seen.push(req.entries.length);
      return { summary: `model summary of ${req.entries.length} for ${req.agentId}` };
    });
    await call(RPC.sessionsAppend, { key: "web:s", agentId: "", entries: [user("more.")] });
    const res = await call(RPC.sessionsCompact, { key: "web:s" });
    expect(res).toMatchObject({ compacted: true, beforeCount: 10, afterCount: 9 });
    history = await call(RPC.sessionsHistory, { key: "web:s", agentId: "", limit: 0, create: false });
    expect(history.entries[0]!.body).toBe("model summary of 2 for smart");
    expect(seen).toEqual([2]);
  });
});
