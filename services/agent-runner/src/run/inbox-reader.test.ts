import { createSubjects, InProcessBus } from "@gw/bus";
import type { InboxEntry } from "@gw/contracts";
import { RunInbox } from "@gw/runs";
import { createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import type { ModelChunk, ModelProvider, ModelRequest } from "../providers/model-provider.js";
import { timeNowTool } from "../tools/time-now.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { runAgentLoop } from "./agent-loop.js";
import { InboxReader } from "./inbox-reader.js";
import { RunEventPublisher } from "./run-event-publisher.js";

const entry = (id: string, kind: InboxEntry["kind"], at: number): InboxEntry => ({ id, kind, text: `text ${id}`, sender: "Ada", at });

/** Run "r" of the agent loop with the time.now tool, reading `reader`. */
function loop(provider: ModelProvider, reader: InboxReader) {
  return runAgentLoop({
    provider,
    model: "m",
    system: "",
    history: [],
    turn: [{ role: "user", content: "hi" }],
    thinking: undefined,
    toolAllow: ["time.now"],
    tools: new ToolRegistry([timeNowTool]),
    maxToolRounds: 4,
    events: new RunEventPublisher(new InProcessBus(), createSubjects("t"), { runId: "r", sessionKey: "s", edgeId: "e" }),
    ctx: { signal: new AbortController().signal, agentId: "a", sessionKey: "s", runId: "r" },
    inbox: reader,
  });
}

describe("InboxReader", () => {
  it("reads each steer message once, joined in arrival order, and keeps context ones apart", async () => {
    const inbox = new RunInbox(createMemoryFastStore(), 60_000);
    const reader = new InboxReader(inbox, "r1");
    expect(await reader.next()).toBeUndefined();
    await inbox.offer("r1", [entry("b", "steer", 2), entry("a", "steer", 1), entry("old", "context", 0)]);
    // Handed over twice (a replica taking the session over): still once.
    await inbox.offer("r1", [entry("a", "steer", 1)]);
    expect(await reader.next()).toEqual({ role: "user", content: "text a\n\ntext b" });
    expect(await reader.next()).toBeUndefined();
    await inbox.offer("r1", [entry("c", "steer", 3)]);
    await inbox.offer("r2", [entry("other", "steer", 3)]);
    expect(await reader.next()).toEqual({ role: "user", content: "text c" });
    expect(reader.steered).toEqual(["a", "b", "c"]);
    expect(reader.context.map((e) => e.id)).toEqual(["old"]);
  });

  it("the agent loop gives a message handed over during a tool call to the next model call, after the tool result", async () => {
    const inbox = new RunInbox(createMemoryFastStore(), 60_000);
    const reader = new InboxReader(inbox, "r");
    const requests: ModelRequest[] = [];
    const turns: ModelChunk[][] = [[{ type: "tool_call", call: { id: "c1", name: "time__now", input: {} } }], [{ type: "text", text: "done" }]];
    const provider: ModelProvider = {
      async *stream(request) {
        requests.push(structuredClone(request));
        // The person writes while the model is busy with its first call.
        if (requests.length === 1) await inbox.offer("r", [entry("late", "steer", 1)]);
        for (const chunk of turns[requests.length - 1]!) yield chunk;
      },
    };
    const result = await loop(provider, reader);
    expect(requests[1]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(requests[1]!.messages.at(-1)).toMatchObject({ role: "user", content: "text late" });
    expect(result.added.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
    expect(reader.steered).toEqual(["late"]);
  });

  it("a message handed over during the final model call is not read: the run lists nothing", async () => {
    const inbox = new RunInbox(createMemoryFastStore(), 60_000);
    const reader = new InboxReader(inbox, "r");
    const provider: ModelProvider = {
      async *stream() {
        await inbox.offer("r", [entry("too-late", "steer", 1)]);
        yield { type: "text", text: "answer" };
      },
    };
    const result = await loop(provider, reader);
    expect(result.text).toBe("answer");
    expect(reader.steered).toEqual([]);
  });
});
