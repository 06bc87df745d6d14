import { waitFor } from "@gw/testing";
import { afterAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

const HOOK_TOKEN = "e2e-hook-token-batches-7d21";
/** What one heartbeat turn's message may take (services/hooks MAX_TURN_MESSAGE_BYTES). */
const MAX_TURN_MESSAGE_BYTES = 262_144;

async function turnBodies(client: WsClient): Promise<string[]> {
  const preview = await send(client, "sessions.preview", { key: "hook:main", limit: 50 });
  if (!preview.ok) return [];
  const messages = preview.payload!.messages as Array<{ role: string; body: string }>;
  return messages.filter((m) => m.role === "user").map((m) => m.body).reverse();
}

const INTERVAL_MS = 2_000;
const linesOf = (body: string) => body.split("\n").slice(1);

describe.each(MODES)("the heartbeat with more texts than one run request carries (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let client: WsClient | undefined;
  afterAll(async () => {
    client?.close();
    await gw?.stop();
  });

  it("takes them over successive beats, oldest first, each once, no turn's message over 256 KiB", async () => {
    gw = await startGateway(mode, {
      extraConfig: { hooks: { enabled: true, token: HOOK_TOKEN, maxBodyBytes: 65_536, heartbeat: { intervalSeconds: INTERVAL_MS / 1000 } } },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
    // 16,000 three-byte characters: 48 KB a text (UTF-8), 288 KB in all; one turn carries five.
    const texts = Array.from({ length: 6 }, (_, i) => `#${i} ${"€".repeat(15_997)}`);
    // Queued just after an interval's boundary, so that no beat falls between two of the texts.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS - (Date.now() % INTERVAL_MS) + 200));
    for (const text of texts) {
      const res = await httpRequest(`${gw.httpUrl()}/hooks/wake`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
        body: JSON.stringify({ text, mode: "next-heartbeat" }),
      });
      expect(res.status).toBe(200);
    }
    const turns = await waitFor(
      async () => {
        const found = await turnBodies(client!);
        return found.flatMap(linesOf).length >= texts.length ? found : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(turns.map((body) => linesOf(body).length)).toEqual([5, 1]);
    for (const body of turns) expect(Buffer.byteLength(body, "utf8")).toBeLessThanOrEqual(MAX_TURN_MESSAGE_BYTES);
    const taken = turns.flatMap(linesOf).map((line) => line.replace(/^\[.*?\] /, "").slice(0, 10));
    expect(taken).toEqual(texts.map((text) => `wake: ${text.slice(0, 4)}`));
    // Nothing is left: the next intervals start no turn.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(await turnBodies(client)).toHaveLength(2);
  });
});
