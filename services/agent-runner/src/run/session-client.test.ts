import { createSubjects, InProcessBus } from "@gw/bus";
import { RPC, type SessionEntry } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../providers/model-provider.js";
import { entriesToMessages, messageToEntry, SessionClient } from "./session-client.js";

const subjects = createSubjects("t");

describe("SessionClient.load", () => {
  it("gives up the read when the run's signal aborts, not at the request timeout", async () => {
    const bus = new InProcessBus();
    // A sessions service that never answers: the reply was lost, say, in a NATS restart.
    bus.handle(subjects.rpc(RPC.sessionsHistory.service, RPC.sessionsHistory.method), () => new Promise<Uint8Array>(() => undefined));
    const client = new SessionClient({ bus, subjects, timeoutMs: 60_000, historyLimit: 10 });
    const run = new AbortController();
    const loading = client.load("s", "main", run.signal);
    const reason = new Error("the run did not finish within 1 s");
    run.abort(reason);
    await expect(loading).rejects.toBe(reason);
  });

  it("never leaves the abandoned read's failure unhandled when the run was aborted before the read began", async () => {
    // Issue 29: the read of a session deleted meanwhile failed after the run had given up on it,
    // with no handler attached, and Node's default ended the whole process.
    const bus = new InProcessBus();
    let failRead: (err: Error) => void = () => undefined;
    bus.handle(
      subjects.rpc(RPC.sessionsHistory.service, RPC.sessionsHistory.method),
      () => new Promise<Uint8Array>((_, reject) => (failRead = reject)),
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const client = new SessionClient({ bus, subjects, timeoutMs: 60_000, historyLimit: 10 });
      const run = new AbortController();
      const reason = new Error("aborted by chat.abort");
      run.abort(reason);
      await expect(client.load("s", "main", run.signal)).rejects.toBe(reason);
      failRead(new Error("unknown session: s"));
      // Two macrotask turns: Node reports an unhandled rejection after the microtask queue drains.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("answers as before without a signal", async () => {
    const bus = new InProcessBus();
    const client = new SessionClient({ bus, subjects, timeoutMs: 200, historyLimit: 10 });
    await expect(client.load("s", "main")).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});

describe("messageToEntry", () => {
  const senders = { user: "Ada", assistant: "Ops desk" };

  it("names the person for a user turn and the agent's display name for an assistant turn (SPEC §2)", () => {
    expect(messageToEntry({ role: "user", content: "hi" }, "r1", senders)).toMatchObject({ role: "user", sender: "Ada", body: "hi", runId: "r1" });
    expect(messageToEntry({ role: "assistant", content: "hello" }, "r1", senders)).toMatchObject({ role: "assistant", sender: "Ops desk", body: "hello" });
  });

  it("names the tool for a tool result", () => {
    const entry = messageToEntry({ role: "tool", toolCallId: "c1", name: "time.now", content: "{}" }, "r1", senders);
    expect(entry).toMatchObject({ role: "tool", sender: "time.now" });
  });
});

describe("entriesToMessages", () => {
  const senders = { user: "Ada", assistant: "Main" };
  const stored = (messages: ChatMessage[]): SessionEntry[] =>
    messages.map((m, i) => ({ ...messageToEntry(m, "r1", senders), id: `e${i}`, parentId: "", timestamp: 0, kind: "message" }));
  const call = (id: string): ChatMessage => ({ role: "assistant", content: "", toolCalls: [{ id, name: "time.now", input: {} }] });
  const result = (id: string): ChatMessage => ({ role: "tool", toolCallId: id, name: "time.now", content: `at ${id}` });

  it("replays a whole tool exchange as it was stored", () => {
    const exchange = [{ role: "user", content: "time?" } as const, call("c1"), result("c1"), { role: "assistant", content: "noon" } as const];
    expect(entriesToMessages(stored(exchange)).messages).toEqual(exchange);
  });

  it("leaves out tool results whose call was cut off by the history limit", () => {
    // The newest entries began after the call: a provider refuses its results.
    const tail = [result("c1"), result("c2"), { role: "assistant", content: "two times" } as const, { role: "user", content: "again" } as const];
    expect(entriesToMessages(stored(tail)).messages).toEqual(tail.slice(2));
    // A result after the turn moved on answers a call no longer there, even with a reused id.
    const later = [call("c1"), result("c1"), { role: "user", content: "hm" } as const, result("c1")];
    expect(entriesToMessages(stored(later)).messages).toEqual(later.slice(0, 3));
  });
});
