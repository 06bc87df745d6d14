import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** About 200 KiB: builtin/echo answers with the same text, so each turn stores twice that. */
const LONG = (turn: number) => `turn ${turn}: ${"x".repeat(200 * 1024)}`;

/**
 * A session whose newest entries hold more than one bus message (NATS max_payload, 1 MiB by
 * default) still runs and previews: the sessions service answers with the newest entries that
 * fit, where it used to fail every later run on that session.
 */
describe.each(MODES)("sessions of long messages (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    gw = await startGateway(mode);
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await gw?.stop();
  });

  it("runs every turn and previews the newest messages once the history outgrows a bus message", async () => {
    const key = `big:${mode}`;
    for (let turn = 1; turn <= 5; turn++) {
      const answer = await client.request("agent", { message: LONG(turn), sessionKey: key }, 30_000);
      expect(answer.error, `turn ${turn}`).toBeUndefined();
      const text = (answer.payload?.payloads as Array<{ text: string }>)[0]!.text;
      expect(text.startsWith(`turn ${turn}: x`), `turn ${turn}`).toBe(true);
    }
    const preview = await client.request("sessions.preview", { key, limit: 20 }, 30_000);
    expect(preview.error).toBeUndefined();
    const messages = preview.payload?.messages as Array<{ role: string; body: string }>;
    // Ten messages of 200 KiB are stored; the newest that fit one reply are shown, newest first.
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.length).toBeLessThan(10);
    expect(messages[0]!.role).toBe("assistant");
    expect(messages[0]!.body.startsWith("turn 5: x")).toBe(true);
  }, 120_000);
});
