import { Writable } from "node:stream";
import { createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import { GatewayError, RPC } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractiveSummary } from "./compaction.js";
import type { SessionMeta, StoredEntry } from "../model.js";
import { createSummarizer } from "./summarizer.js";

const older: StoredEntry[] = ["First point. More.", "Second point.", "Third point."].map((body, i) => ({
  id: `e${i}`,
  parentId: i === 0 ? "" : `e${i - 1}`,
  role: i % 2 === 0 ? "user" : "assistant",
  sender: "",
  body,
  timestamp: 0,
  runId: "",
  kind: "message",
  meta: "",
}));

const meta = (model: string): SessionMeta => ({
  key: "web:s",
  agentId: "smart",
  model,
  thinking: "",
  createdAt: 0,
  updatedAt: 0,
  messageCount: older.length,
  leafId: "e2",
  gen: "g",
  historySeq: 0,
});

/** A caller's deadline a few seconds away. */
const soon = () => Date.now() + 5_000;

describe("createSummarizer", () => {
  let bus: InProcessBus;
  let lines: string[];
  const subjects = createSubjects("test");
  const summarizer = () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    return createSummarizer({ bus, subjects, logger: createLogger({ service: "test", destination }), timeoutMs: 1_000 });
  };

  beforeEach(() => {
    bus = new InProcessBus();
    lines = [];
  });
  afterEach(() => bus.close());

  it("uses the runner's model summary when one answers", async () => {
    serveRpc(bus, subjects, RPC.agentSummarize, (req) => ({ summary: `${req.agentId}/${req.model}: ${req.entries.length} entries, ${req.maxChars} chars` }));
    expect(await summarizer()(meta("openai/gpt"), older, soon())).toBe("smart/openai/gpt: 3 entries, 4000 chars");
    expect(lines).toEqual([]);
  });

  it("never asks the runner for builtin models", async () => {
    let asked = false;
    serveRpc(bus, subjects, RPC.agentSummarize, () => {
      asked = true;
      return { summary: "model" };
    });
    expect(await summarizer()(meta("builtin/echo"), older, soon())).toBe(extractiveSummary(older));
    expect(asked).toBe(false);
  });

  it.each([
    ["the runner's typed error", () => Promise.reject(new GatewayError("MODEL_ERROR", "openai answered HTTP 500"))],
    ["an empty summary", () => Promise.resolve({ summary: "  " })],
  ])("falls back to the extractive summary on %s, with a warning for errors", async (what, answer) => {
    serveRpc(bus, subjects, RPC.agentSummarize, answer);
    expect(await summarizer()(meta("openai/gpt"), older, soon())).toBe(extractiveSummary(older));
    const warned = lines.some((l) => l.includes("model summary unavailable") && l.includes("MODEL_ERROR"));
    expect(warned).toBe(what === "the runner's typed error");
  });

  it("gives the model at most half of the caller's remaining time, so the fallback lands before the deadline", async () => {
    serveRpc(bus, subjects, RPC.agentSummarize, () => new Promise<never>(() => undefined));
    const deadline = Date.now() + 600;
    expect(await summarizer()(meta("openai/gpt"), older, deadline)).toBe(extractiveSummary(older));
    expect(Date.now()).toBeLessThan(deadline);
  });

  it("falls back with a warning when no runner answers", async () => {
    expect(await summarizer()(meta("openai/gpt"), older, soon())).toBe(extractiveSummary(older));
    expect(lines.join("")).toMatch(/model summary unavailable/);
  });
});
