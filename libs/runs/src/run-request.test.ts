import { createMemoryFastStore, type FastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { queuedRecord, registerRun, runRequest } from "./run-request.js";
import { RunRegistry } from "./run-registry.js";

describe("runRequest (the one RunRequest literal)", () => {
  it("fills every field left out with its default, and a new runId and nonce", () => {
    const a = runRequest({ sessionKey: "s:1", message: "hi", edgeId: "hooks", acceptedAt: 5 });
    expect(a).toEqual({
      runId: expect.any(String),
      sessionKey: "s:1",
      agentId: "",
      message: "hi",
      model: "",
      thinking: "",
      extraSystemPrompt: "",
      timeoutSeconds: 0,
      deliver: false,
      messageChannel: "",
      to: "",
      sender: "",
      edgeId: "hooks",
      acceptedAt: 5,
      ephemeral: false,
      history: [],
      nonce: expect.any(String),
      clientTools: [],
      toolChoice: undefined,
      sampling: undefined,
      toolCallTurn: undefined,
      toolResults: [],
      attachments: [],
    });
    const b = runRequest({ sessionKey: "s:1", message: "hi", edgeId: "hooks" });
    expect([b.runId, b.nonce]).not.toContain(a.runId);
    expect(b.nonce).not.toBe(a.nonce);
  });

  it("keeps what is given, undefined meaning the default, and rounds a fraction of a second up", () => {
    const r = runRequest({ runId: "r1", nonce: "n1", sessionKey: "s:1", message: "hi", edgeId: "e", agentId: undefined, model: "p/m", deliver: true, timeoutSeconds: 1.2 });
    expect(r).toMatchObject({ runId: "r1", nonce: "n1", agentId: "", model: "p/m", deliver: true, timeoutSeconds: 2 });
  });
});

describe("run registration", () => {
  it("records a request as queued under its nonce, created when it was accepted unless told", () => {
    const request = runRequest({ runId: "r1", nonce: "n1", sessionKey: "s:1", agentId: "main", message: "hi", edgeId: "e", acceptedAt: 7 });
    const base = { runId: "r1", nonce: "n1", sessionKey: "s:1", agentId: "main", state: "queued", edgeId: "e" };
    expect(queuedRecord(request)).toEqual({ ...base, createdAt: 7, updatedAt: 7 });
    expect(queuedRecord(request, 9)).toEqual({ ...base, createdAt: 9, updatedAt: 9 });
  });

  it("registers a new runId, and answers a taken one with the record already there", async () => {
    const registry = new RunRegistry(createMemoryFastStore());
    const first = queuedRecord(runRequest({ runId: "r1", nonce: "n1", sessionKey: "s:1", message: "hi", edgeId: "e" }));
    expect(await registerRun(registry, first)).toEqual({ registered: true });
    const second = queuedRecord(runRequest({ runId: "r1", nonce: "n2", sessionKey: "s:1", message: "again", edgeId: "e" }));
    expect(await registerRun(registry, second)).toEqual({ registered: false, existing: expect.objectContaining({ runId: "r1", nonce: "n1", state: "queued" }) });
  });

  it("passes on a registry failure that is not a taken runId", async () => {
    const store = createMemoryFastStore();
    const down = new RunRegistry({ ...store, values: { ...store.values, set: () => Promise.reject(new Error("store down")) } } as FastStore);
    const record = queuedRecord(runRequest({ runId: "r1", sessionKey: "s:1", message: "hi", edgeId: "e" }));
    await expect(registerRun(down, record)).rejects.toThrow("store down");
  });
});
