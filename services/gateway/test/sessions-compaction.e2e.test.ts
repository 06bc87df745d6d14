import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runGatewaySuite, send } from "./fixtures/agent-runs.js";
import { MODES } from "./fixtures/gateway.js";
import type { WsClient } from "./fixtures/ws-client.js";

/** An OpenAI chat message as the runner sent it to the fake model. */
interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
}

/**
 * The tool messages OpenAI would refuse: each must answer a call of the assistant turn before
 * the run of tool messages it is in, once.
 */
function orphanedToolMessages(messages: WireMessage[]): WireMessage[] {
  const orphans: WireMessage[] = [];
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      if (!open.delete(m.tool_call_id ?? "")) orphans.push(m);
    } else open = new Set(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []);
  }
  return orphans;
}

/**
 * `sessions.compact` through the public WebSocket surface, in both modes: it never makes a
 * history bigger, and never leaves a tool result whose call went into the summary (every later
 * run of the session would then fail at the provider).
 */
describe.each(MODES)("sessions.compact keeps history small and well formed (%s)", (mode) => {
  const suite = runGatewaySuite(mode, "control");
  const ok = async (client: WsClient, method: string, params: Record<string, unknown>) => {
    const res = await send(client, method, params);
    if (!res.ok) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.payload!;
  };
  const newKey = () => `compact:${randomUUID().slice(0, 8)}`;

  it("does not grow a session of short messages, and leaves it as it was", async () => {
    const client = await suite.open();
    const key = newKey();
    for (const letter of ["a", "b", "c", "d", "e"]) await ok(client, "agent", { message: letter, sessionKey: key });
    const before = await ok(client, "sessions.preview", { key, limit: 50 });
    expect(before.messageCount).toBe(10);
    // Five one-letter turns are 105 bytes; their extractive summary alone is longer.
    expect(await ok(client, "sessions.compact", { key })).toEqual({ compacted: false, beforeSize: 105, afterSize: 105 });
    expect(await ok(client, "sessions.preview", { key, limit: 50 })).toEqual(before);
  });

  it("keeps a tool exchange whole, so the next run sends the model no orphaned tool result", async () => {
    const client = await suite.open();
    const key = newKey();
    const say = (message: string) => ok(client, "agent", { message, sessionKey: key, agentId: "oa" });
    for (let i = 0; i < 2; i++) await say(`Opening question ${i}, long enough that a summary of it is shorter.`);
    // user, assistant (three calls), three tool results, assistant: the newest 8 entries would
    // begin at the first tool result after two more turns.
    await say("tools:time__now,time__now,time__now thrice");
    for (let i = 0; i < 2; i++) await say(`Later ${i}`);
    const res = await ok(client, "sessions.compact", { key });
    expect(res.compacted).toBe(true);
    expect(res.afterSize as number).toBeLessThan(res.beforeSize as number);
    const messages = (await ok(client, "sessions.preview", { key, limit: 50 })).messages as Array<{ role: string; kind: string }>;
    // Newest first: the summary, then the assistant turn that made the calls, then its results.
    expect(messages.map((m) => m.role).reverse()).toEqual(["system", "assistant", "tool", "tool", "tool", "assistant", "user", "assistant", "user", "assistant"]);
    expect(messages.at(-1)!.kind).toBe("summary");

    const marker = `after the compaction ${key}`;
    await say(marker);
    const request = suite.fake.requests.find((r) => JSON.stringify(r.body.messages ?? []).includes(marker));
    const sent = request!.body.messages as WireMessage[];
    expect(sent.filter((m) => m.role === "tool")).toHaveLength(3);
    expect(orphanedToolMessages(sent)).toEqual([]);
  });
});
