import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectRun, send } from "./fixtures/agent-runs.js";
import { AGENTS, type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** Nothing listens on port 9: the provider cannot be reached, and its error names the URL. */
const DEAD_URL = "http://127.0.0.1:9/v1";
/** What no frame to a webchat or node connection may hold: the URL, its host, the failure's words. */
const INTERNAL = /127\.0\.0\.1|http:\/\/|cannot reach|ECONNREFUSED/;
const GENERIC = /^the model provider failed \(request id (req_[0-9a-f]{32})\)$/;

type LogLine = Record<string, unknown>;

/**
 * DESIGN §10 over WebSocket: a server-side failure (here a model provider nobody can reach)
 * reaches webchat (browsers) and node (devices) connections as the catalogue's message and a
 * request id, in the `agent` answer, the lifecycle `error` event and `agent.wait`; the URL and
 * host are in the log under that id. Control connections, operators' tools, get the words.
 */
describe.each(MODES)("what a failed run shows each role over WebSocket (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const open = async (role: string) => {
    const client = await WsClient.open(gw.wsUrl());
    clients.push(client);
    expect((await client.connect(TOKEN, role)).ok).toBe(true);
    return client;
  };
  const logLines = (): LogLine[] =>
    gw
      .fullLogs()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine);
  /** The log has the failure's words under `requestId` (lines reach stdout in batches: polled). */
  const expectLogged = (requestId: string) =>
    expect
      .poll(() => logLines().some((l) => l.reqId === requestId && JSON.stringify(l).includes("127.0.0.1:9")), { timeout: 5_000 })
      .toBe(true);

  beforeAll(async () => {
    gw = await startGateway(mode, {
      agents: [...AGENTS, { id: "dead", name: "Dead", model: "dead/gpt-test" }],
      models: { providers: { dead: { kind: "openai", baseUrl: DEAD_URL, apiKey: "sk-dead", timeoutMs: 2_000 } } },
    });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await gw?.stop();
  });

  it.each(["webchat", "node"])("gives a %s connection the catalogue's message and a request id, and control the provider's URL", async (role) => {
    const operator = await open("control");
    const client = await open(role);
    const raw: string[] = [];
    client.socket.on("message", (data) => raw.push(String(data)));
    const runId = `dead-${role}-${mode}`;
    const sessionKey = role === "webchat" ? `webchat:operator:dead-${mode}` : `e2e:dead-${mode}`;
    const answer = send(client, "agent", { message: "anyone there", sessionKey, agentId: "dead", runId }, 30_000);
    const events = await collectRun(client, runId, 30_000);

    // The lifecycle error: the catalogue's message and the id of the request that started the run.
    const failed = events.at(-1)!.data;
    expect(failed).toMatchObject({ phase: "error", code: "MODEL_ERROR", error: expect.stringMatching(GENERIC) });
    const requestId = GENERIC.exec(String(failed.error))![1]!;
    expect(failed.requestId).toBe(requestId);
    // The `agent` answer: the same, under the same id (the run continues the request's trace).
    expect(await answer).toMatchObject({
      ok: false,
      error: { code: "MODEL_ERROR", message: `the model provider failed (request id ${requestId})`, details: { runId, requestId } },
    });
    // agent.wait: its own request's id, under which the edge logs the words.
    const waited = await send(client, "agent.wait", { runId });
    expect(waited.payload?.error).toMatchObject({ code: "MODEL_ERROR", message: expect.stringMatching(GENERIC) });
    const waitId = GENERIC.exec(String((waited.payload?.error as { message: string }).message))![1]!;
    expect(raw.length).toBeGreaterThanOrEqual(events.length + 2);
    for (const frame of raw) expect(frame).not.toMatch(INTERNAL);

    // Control heard the run's lifecycle, in the provider's own words, with the same request id.
    const seen = (await collectRun(operator, runId)).at(-1)!.data;
    expect(seen).toMatchObject({ code: "MODEL_ERROR", requestId, error: expect.stringContaining(`cannot reach dead at ${DEAD_URL}`) });
    await expectLogged(requestId);
    await expectLogged(waitId);
  });

  it("gives a control connection's own run the provider's words", async () => {
    const operator = await open("control");
    const runId = `dead-control-${mode}`;
    const answer = send(operator, "agent", { message: "anyone there", sessionKey: `e2e:dead-control-${mode}`, agentId: "dead", runId }, 30_000);
    const events = await collectRun(operator, runId, 30_000);
    expect(events.at(-1)!.data).toMatchObject({ code: "MODEL_ERROR", error: expect.stringContaining(DEAD_URL) });
    expect(await answer).toMatchObject({ ok: false, error: { code: "MODEL_ERROR", message: expect.stringContaining(`cannot reach dead at ${DEAD_URL}`) } });
    const waited = await send(operator, "agent.wait", { runId });
    expect(waited.payload?.error).toMatchObject({ code: "MODEL_ERROR", message: expect.stringContaining(DEAD_URL) });
  });
});
