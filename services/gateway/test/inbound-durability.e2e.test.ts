import { freePort, telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway } from "./fixtures/gateway.js";
import { inboundAgents, inboundChannels, type InboundFakes, postWebhook, sleep, startInboundFakes, TG_PEOPLE, TG_SECRET } from "./fixtures/inbound.js";

const MESSAGES = 100;
const CHATS = TG_PEOPLE.slice(0, 20);

/** Each message names itself, so its answer ("You said: …") can be counted; each run takes ~1.5 s. */
const textOf = (i: number) => `crash-${i} pause1500`;

describe("inbound messages across a kill -9 of delivery (distributed)", () => {
  let fakes: InboundFakes;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    fakes = await startInboundFakes();
    gw = await startGateway("distributed", {
      ...inboundAgents(fakes),
      deliveryReplicas: 1,
      extraConfig: { channels: inboundChannels(fakes, await freePort()), delivery: { pacing: "off" } },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await fakes?.close();
  });

  it("answers every acknowledged message exactly once after delivery is killed between acknowledgement and processing", async () => {
    // 100 messages from 20 people (5 each, so most wait in their session's queue), all acknowledged.
    const posts = Array.from({ length: MESSAGES }, (_, i) => {
      const chat = CHATS[i % CHATS.length]!;
      return () => postWebhook(gw, "/api/channels/tg/webhook", telegramWebhookRequest(telegramUpdate({ chatId: chat, from: { id: chat }, text: textOf(i) }), TG_SECRET));
    });
    const statuses: number[] = [];
    for (let i = 0; i < posts.length; i += 10) statuses.push(...(await Promise.all(posts.slice(i, i + 10).map((post) => post()))).map((r) => r.status));
    expect(statuses.filter((s) => s === 200)).toHaveLength(MESSAGES);

    // Killed with the first turns running and the rest stored but untouched.
    await gw.delivery![0]!.kill("SIGKILL");
    const answeredBeforeRestart = fakes.telegram.delivered.length;
    expect(answeredBeforeRestart).toBeLessThan(MESSAGES / 2);
    await gw.addDeliveryReplica!();

    const answers = () => fakes.telegram.delivered.filter((d) => d.text?.startsWith("You said: crash-"));
    const deadline = Date.now() + 90_000;
    while (new Set(answers().map((d) => d.text)).size < MESSAGES && Date.now() < deadline) await sleep(250);
    // Anything sent twice would arrive soon after the last answer: give it time to show.
    await sleep(3_000);

    const counts = new Map<string, number>();
    for (const d of answers()) counts.set(d.text!, (counts.get(d.text!) ?? 0) + 1);
    const missing = Array.from({ length: MESSAGES }, (_, i) => i).filter((i) => !counts.has(`You said: ${textOf(i)}`));
    const twice = [...counts].filter(([, n]) => n > 1);
    expect({ missing, twice, answered: counts.size }).toEqual({ missing: [], twice: [], answered: MESSAGES });
    // Each to its own sender, and each session's answers in the order its messages came.
    for (const [index, chat] of CHATS.entries()) {
      const own = answers().filter((d) => d.chat === String(chat)).map((d) => d.text);
      const expected = Array.from({ length: MESSAGES / CHATS.length }, (_, k) => `You said: ${textOf(index + k * CHATS.length)}`);
      expect(own).toEqual(expected);
    }
    // The agent ran once per message: a turn taken up again follows the run it had started.
    const asked = fakes.model.requests.map((r) => (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === "user").at(-1)?.content);
    const runsPerMessage = Array.from({ length: MESSAGES }, (_, i) => asked.filter((content) => content === textOf(i)).length);
    expect(runsPerMessage.filter((n) => n !== 1)).toEqual([]);
  }, 150_000);
});

describe("inbound messages on two delivery replicas (distributed)", () => {
  let fakes: InboundFakes;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    fakes = await startInboundFakes();
    gw = await startGateway("distributed", {
      ...inboundAgents(fakes),
      deliveryReplicas: 2,
      extraConfig: { channels: inboundChannels(fakes, await freePort()), delivery: { pacing: "off" } },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await fakes?.close();
  });

  // The bus's queue group hands each webhook to either replica at random (all 11 on one: 1 in 1,024).
  it("answers one chat's messages once and in order while the webhooks land on either replica", async () => {
    const chat = TG_PEOPLE[30]!;
    const post = (text: string) =>
      postWebhook(gw, "/api/channels/tg/webhook", telegramWebhookRequest(telegramUpdate({ chatId: chat, from: { id: chat }, text }), TG_SECRET));
    expect((await post("first pause1000")).status).toBe(200);
    for (let i = 1; i <= 10; i++) expect((await post(`then ${i}`)).status).toBe(200);
    const deadline = Date.now() + 60_000;
    const answers = () => fakes.telegram.delivered.filter((d) => d.chat === String(chat)).map((d) => d.text);
    while (answers().length < 11 && Date.now() < deadline) await sleep(100);
    await sleep(1_500);
    expect(answers()).toEqual(["You said: first pause1000", ...Array.from({ length: 10 }, (_, i) => `You said: then ${i + 1}`)]);
  }, 90_000);
});
