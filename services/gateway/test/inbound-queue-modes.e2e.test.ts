/**
 * Queue modes end to end in both modes (issue 26 §1): three messages written while a run is
 * going (the fake model holds its answer until the test lets it go) give exactly the answers each
 * mode promises, and the chat's session holds every message. The channel collects; bindings per
 * chat steer, interrupt, or collect under a cap of 2 with a summary. In distributed mode two
 * delivery replicas share the chats (a webhook lands on either: the replica that stores a message
 * is seldom the one running its chat's turn), and delivery killed (SIGKILL) with a turn running
 * and collected messages pending loses none of them.
 */
import { type FakeModelServer, freePort, telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { delivered, type InboundFakes, inboundChannels, postWebhook, sleep, startInboundFakes, TG_PEOPLE, TG_SECRET } from "./fixtures/inbound.js";
import { WsClient } from "./fixtures/ws-client.js";

const [COLLECT, STEER, INTERRUPT, CAPPED, LATE, KILLED] = TG_PEOPLE;

/** The user text of a model request's last user message. */
function lastUser(request: FakeModelServer["requests"][number]): string {
  const users = (request.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === "user");
  const content = users.at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

describe.each(MODES)("inbound queue modes (%s)", (mode) => {
  let fakes: InboundFakes;
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    fakes = await startInboundFakes();
    const { tg } = inboundChannels(fakes, await freePort());
    const bind = (chat: number | undefined, queue: Record<string, unknown>) => ({ match: { channel: "tg", peer: String(chat) }, agentId: "main", queue });
    gw = await startGateway(mode, {
      agents: [{ id: "main", name: "Main", model: "fake/model", tools: ["time.now"] }],
      models: { providers: { fake: { kind: "openai", baseUrl: fakes.model.baseUrl, apiKey: "sk-fake", timeoutMs: 15_000 } } },
      deliveryReplicas: 2,
      extraConfig: {
        channels: { tg: { ...tg, queue: { mode: "collect" } } },
        bindings: [
          bind(STEER, { mode: "steer" }),
          bind(LATE, { mode: "steer" }),
          bind(INTERRUPT, { mode: "interrupt" }),
          bind(CAPPED, { mode: "collect", cap: 2, drop: "summarize" }),
        ],
        delivery: { pacing: "off" },
      },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fakes?.close();
  });

  /** A person's message, acknowledged (stored) once this resolves. */
  async function write(chat: number, text: string): Promise<void> {
    const res = await postWebhook(gw, "/api/channels/tg/webhook", telegramWebhookRequest(telegramUpdate({ chatId: chat, from: { id: chat }, text }), TG_SECRET));
    expect(res.status).toBe(200);
  }

  /** Waits until the model was asked with `text` in the last user message. */
  async function asked(text: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!fakes.model.requests.some((r) => lastUser(r).includes(text))) {
      if (Date.now() > deadline) throw new Error(`the model was never asked about ${text}`);
      await sleep(20);
    }
  }

  /** The answers each chat had once its test saw them arrive; the last test checks no more came. */
  const answered = new Map<number, string[]>();
  let lastAnswerAt = 0;

  /** Every answer the chat got, once `count` have arrived. */
  async function answersOf(chat: number, count: number): Promise<string[]> {
    await delivered(fakes.telegram, (d) => d.chat === String(chat), count);
    const answers = fakes.telegram.delivered.filter((d) => d.chat === String(chat)).map((d) => d.text ?? "");
    answered.set(chat, answers);
    lastAnswerAt = Date.now();
    return answers;
  }

  /** The session's messages, oldest first (the preview lists the newest first). */
  async function sessionBodies(chat: number): Promise<string[]> {
    const preview = await client.request("sessions.preview", { key: `tg:${chat}` });
    expect(preview.ok).toBe(true);
    return (preview.payload?.messages as Array<{ role: string; body: string }>).map((m) => `${m.role}:${m.body}`).reverse();
  }

  /** The first message starts a run the model holds; `during` are written while it is held. */
  async function duringHeldRun(chat: number, first: string, during: string[], beforeRelease?: () => Promise<void>): Promise<void> {
    const release = fakes.model.hold();
    try {
      await write(chat, first);
      await asked(first);
      for (const text of during) await write(chat, text);
      await beforeRelease?.();
    } finally {
      release();
    }
  }

  it("collect (the channel's mode): the three messages written during a run are answered together in one next turn", async () => {
    await duringHeldRun(COLLECT!, "c1", ["c2", "c3", "c4"]);
    expect(await answersOf(COLLECT!, 2)).toEqual(["You said: c1", "You said: c2\n\nc3\n\nc4"]);
    expect(await sessionBodies(COLLECT!)).toEqual(["user:c1", "assistant:You said: c1", "user:c2\n\nc3\n\nc4", "assistant:You said: c2\n\nc3\n\nc4"]);
  });

  it("steer: the messages reach the running turn at its next model call, after the tool result; one answer takes them in", async () => {
    await duringHeldRun(STEER!, "tools:time__now s1", ["s2", "s3", "s4"]);
    expect(await answersOf(STEER!, 1)).toEqual(["You said: s2\n\ns3\n\ns4"]);
    const bodies = await sessionBodies(STEER!);
    expect(bodies[0]).toBe("user:tools:time__now s1");
    expect(bodies.slice(-2)).toEqual(["user:s2\n\ns3\n\ns4", "assistant:You said: s2\n\ns3\n\ns4"]);
    expect(bodies.map((b) => b.split(":")[0])).toEqual(["user", "assistant", "tool", "user", "assistant"]);
  });

  it("steer: messages that come while the run writes its final answer are collected into the next turn", async () => {
    await duringHeldRun(LATE!, "l1", ["l2", "l3", "l4"]);
    expect(await answersOf(LATE!, 2)).toEqual(["You said: l1", "You said: l2\n\nl3\n\nl4"]);
    expect(await sessionBodies(LATE!)).toEqual(["user:l1", "assistant:You said: l1", "user:l2\n\nl3\n\nl4", "assistant:You said: l2\n\nl3\n\nl4"]);
  });

  it("interrupt: each message aborts the running turn (no partial answer) and one turn answers all four", async () => {
    await duringHeldRun(INTERRUPT!, "i1", ["i2", "i3", "i4"], () => asked("i4"));
    expect(await answersOf(INTERRUPT!, 1)).toEqual(["You said: i1\n\ni2\n\ni3\n\ni4"]);
    expect(await sessionBodies(INTERRUPT!)).toEqual(["user:i1\n\ni2\n\ni3\n\ni4", "assistant:You said: i1\n\ni2\n\ni3\n\ni4"]);
  });

  it("cap 2 with summarize: the older waiting messages become one note in the turn, and are still in the session", async () => {
    await duringHeldRun(CAPPED!, "d1", ["d2 where is my order", "d3", "d4", "d5"]);
    const note = '[2 earlier messages: "d2 where is my order"; "d3"]';
    expect(await answersOf(CAPPED!, 2)).toEqual(["You said: d1", `You said: ${note}\n\nd4\n\nd5`]);
    expect(await sessionBodies(CAPPED!)).toEqual([
      "user:d1",
      "assistant:You said: d1",
      "user:d2 where is my order",
      "user:d3",
      `user:${note}\n\nd4\n\nd5`,
      `assistant:You said: ${note}\n\nd4\n\nd5`,
    ]);
  });

  it.runIf(mode === "distributed")("delivery killed with a turn running and collected messages pending loses none of them", async () => {
    await duringHeldRun(KILLED!, "k1", ["k2", "k3"], async () => {
      // Both replicas, so whichever held the chat's turn is gone; a new one takes it over.
      await Promise.all(gw.delivery!.map((replica) => replica.kill("SIGKILL")));
      await gw.addDeliveryReplica!();
    });
    expect(await answersOf(KILLED!, 2)).toEqual(["You said: k1", "You said: k2\n\nk3"]);
    expect(await sessionBodies(KILLED!)).toEqual(["user:k1", "assistant:You said: k1", "user:k2\n\nk3", "assistant:You said: k2\n\nk3"]);
  }, 60_000);

  // Last: the moment after each chat's answers, in which a doubled answer would show, passes
  // once for all of them (the later tests' time counts towards it) instead of once per test.
  it("answers no chat twice: a moment after the last answer, every chat has only the answers its test saw", async () => {
    expect(answered.size).toBeGreaterThan(0);
    await sleep(Math.max(0, lastAnswerAt + 1_000 - Date.now()));
    for (const [chat, answers] of answered) {
      expect(fakes.telegram.delivered.filter((d) => d.chat === String(chat)).map((d) => d.text ?? ""), `chat ${chat}`).toEqual(answers);
    }
  });
});
