import { encodeMessage, RunRequest } from "@gw/contracts";
import { createMemoryFastStore, type FastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { decodeRunRequest, queuedRecord, registerRun, runRequest } from "./run-request.js";
import { RunRegistry } from "./run-registry.js";

describe("runRequest (the one RunRequest literal)", () => {
  it("fills every field left out with its default, and a new runId and nonce", () => {
    const a = runRequest({ sessionKey: "s:1", message: "hi", edgeId: "hooks", acceptedAt: 5 });
    expect(a).toEqual({
      runId: expect.any(String),
      sessionKey: "s:1",
      agentId: undefined,
      message: "hi",
      model: undefined,
      thinking: undefined,
      extraSystemPrompt: undefined,
      timeoutSeconds: 0,
      deliver: false,
      messageChannel: undefined,
      to: undefined,
      sender: undefined,
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

  it("keeps what is given, undefined or \"\" meaning the default, and rounds a fraction of a second up", () => {
    const r = runRequest({ runId: "r1", nonce: "n1", sessionKey: "s:1", message: "hi", edgeId: "e", agentId: undefined, model: "p/m", sender: "", deliver: true, timeoutSeconds: 1.2 });
    expect(r).toMatchObject({ runId: "r1", nonce: "n1", agentId: undefined, model: "p/m", sender: undefined, deliver: true, timeoutSeconds: 2 });
  });
});

const OPTIONAL_TEXT = ["agentId", "model", "thinking", "extraSystemPrompt", "messageChannel", "to", "sender"] as const;
const fields = (r: RunRequest) => OPTIONAL_TEXT.map((key) => r[key]);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
/**
 * RunRequest({ runId: "r1", sessionKey: "s:1", message: "hi", edgeId: "e", acceptedAt: 5, nonce:
 * "n1" }) as the build before the optional fields encoded it, with "" in each of them.
 */
const OLDER_BUILD_EMPTY = "0a0272311203733a31220268696a016570058a01026e31";
/** The same with agentId main, model p/m, thinking high, prompt x, channel tg, to @a, sender Ada. */
const OLDER_BUILD_GIVEN = "0a0272311203733a311a046d61696e220268692a03702f6d3204686967683a0178520274675a02406162034164616a016570058a01026e31";

describe("decodeRunRequest (a queued request as its reader takes it)", () => {
  const bare = { runId: "r1", sessionKey: "s:1", message: "hi", edgeId: "e", acceptedAt: 5, nonce: "n1" };

  it("reads the fields an older build left \"\" as absent, and those it gave as given", () => {
    expect(fields(decodeRunRequest(Buffer.from(OLDER_BUILD_EMPTY, "hex")))).toEqual(OPTIONAL_TEXT.map(() => undefined));
    expect(fields(decodeRunRequest(Buffer.from(OLDER_BUILD_GIVEN, "hex")))).toEqual(["main", "p/m", "high", "x", "tg", "@a", "Ada"]);
  });

  it("reads a \"\" present on the wire as absent, where the generated decoder keeps it", () => {
    const bytes = encodeMessage(RunRequest, { ...runRequest(bare), agentId: "", model: "", thinking: "", extraSystemPrompt: "", messageChannel: "", to: "", sender: "" });
    expect(fields(RunRequest.decode(bytes))).toEqual(OPTIONAL_TEXT.map(() => ""));
    expect(fields(decodeRunRequest(bytes))).toEqual(OPTIONAL_TEXT.map(() => undefined));
  });

  it("round-trips an absent field as absent, in the bytes an older runner reads as \"\"", () => {
    const request = runRequest(bare);
    const bytes = encodeMessage(RunRequest, request);
    expect(hex(bytes)).toBe(OLDER_BUILD_EMPTY);
    expect(decodeRunRequest(bytes)).toEqual(request);
    expect(fields(decodeRunRequest(bytes))).toEqual(OPTIONAL_TEXT.map(() => undefined));
    const given = runRequest({ ...bare, agentId: "main", model: "p/m", thinking: "high", extraSystemPrompt: "x", messageChannel: "tg", to: "@a", sender: "Ada" });
    expect(hex(encodeMessage(RunRequest, given))).toBe(OLDER_BUILD_GIVEN);
    expect(decodeRunRequest(encodeMessage(RunRequest, given))).toEqual(given);
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
