import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { askToPair, controlEvent } from "./fixtures/devices.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/** What each role may call, as docs/protocol.md states it; the edge's table must agree. */
const CHAT = [
  "agents.list",
  "agent.identity.get",
  "agent",
  "agent.wait",
  "agent.subscribe",
  "agent.unsubscribe",
  "chat.abort",
  "agent.abort",
  "sessions.preview",
  "sessions.subscribe",
  "sessions.unsubscribe",
];
const EXPECTED: Record<string, string[]> = {
  node: [...CHAT, "node.pair.request", "device.token.rotate"],
  webchat: CHAT,
  pairing: ["node.pair.request"],
};

const isEventOf = (prefix: string) => (f: Frame) => typeof f.event === "string" && f.event.startsWith(prefix);

describe("roles: methods and events per role (distributed, two edges)", () => {
  let gw: GatewayUnderTest;
  let everything: string[];
  const clients: WsClient[] = [];
  const open = async (edge: number, params: Record<string, unknown>, localAddress = "127.0.0.90"): Promise<{ client: WsClient; hello: Frame }> => {
    const client = await WsClient.open(gw.wsUrl(edge), { localAddress });
    clients.push(client);
    const hello = await client.request("connect", params);
    expect(hello.ok, JSON.stringify(hello.error)).toBe(true);
    return { client, hello };
  };
  const as = (role: string, edge = 0) => open(edge, { role, auth: { token: TOKEN } });

  beforeAll(async () => {
    gw = await startGateway("distributed", { edges: 2 });
    const { hello } = await as("control", 1);
    everything = (hello.payload!.methods as string[]).filter((m) => m !== "connect");
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("lets control call every method, and answers each other role outside its table with FORBIDDEN", async () => {
    expect(everything).toEqual(expect.arrayContaining([...EXPECTED.node!, "sessions.list", "send", "node.pair.approve", "device.revoke"]));
    // Opened one at a time: a pairing connection that asks nothing is closed after 10 s.
    const connections = {
      control: () => as("control", 0),
      node: () => as("node", 0),
      webchat: () => as("webchat", 1),
      pairing: () => open(0, { role: "node", pairing: true }, "127.0.0.91"),
    };
    for (const [role, connect] of Object.entries(connections)) {
      const { client, hello } = await connect();
      const allowed = role === "control" ? everything : EXPECTED[role]!;
      expect(new Set(hello.payload!.methods as string[]), role).toEqual(new Set(["connect", ...allowed]));
      for (const method of everything) {
        // Empty params: an allowed method fails validation or answers harmlessly; nothing changes.
        const answer = await client.request(method, {});
        if (allowed.includes(method)) {
          expect(answer.error?.code, `${role} ${method}`).not.toBe("FORBIDDEN");
        } else {
          expect(answer.error, `${role} ${method}`).toMatchObject({
            code: "FORBIDDEN",
            message: expect.stringMatching(new RegExp(`^method ${method.replace(/\./g, "\\.")} is not allowed`)),
          });
        }
      }
    }
  });

  it("confines webchat to its own sessions, and delivery to control", async () => {
    const { client: webchat, hello } = await as("webchat", 0);
    expect(hello.payload!.session).toEqual({ key: "webchat:operator" });
    const { client: control } = await as("control", 1);
    const { client: node } = await as("node", 1);

    for (const key of ["webchat:operator", "webchat:operator:trip"]) {
      expect((await send(webchat, "agent", { message: "hi", sessionKey: key })).ok, key).toBe(true);
    }
    const forbidden = async (method: string, params: Record<string, unknown>, client = webchat) =>
      (await send(client, method, params)).error?.code;
    for (const key of ["webchat:someone", "webchat:operator2", "e2e:other"]) {
      expect(await forbidden("agent", { message: "hi", sessionKey: key }), key).toBe("FORBIDDEN");
      expect(await forbidden("sessions.preview", { key }), key).toBe("FORBIDDEN");
      expect(await forbidden("sessions.subscribe", { key }), key).toBe("FORBIDDEN");
      expect(await forbidden("agent.subscribe", { sessionKey: key }), key).toBe("FORBIDDEN");
    }
    // Runs of other sessions: not the webchat's to wait on or abort.
    const runId = `ctl-${Date.now()}`;
    expect((await send(control, "agent", { message: "mine", sessionKey: "e2e:control", runId })).ok).toBe(true);
    expect(await forbidden("agent.wait", { runId })).toBe("FORBIDDEN");
    expect(await forbidden("chat.abort", { runId })).toBe("FORBIDDEN");
    expect(await forbidden("agent.subscribe", { runId, afterSeq: 0 })).toBe("FORBIDDEN");
    const own = `own-${Date.now()}`;
    await send(webchat, "agent", { message: "again", sessionKey: "webchat:operator", runId: own });
    expect((await send(webchat, "agent.wait", { runId: own })).payload).toMatchObject({ completed: true });
    // A node names any session, but neither it nor webchat sends answers to a channel.
    expect((await send(node, "agent", { message: "hi", sessionKey: "e2e:node" })).ok).toBe(true);
    const delivering = { message: "hi", sessionKey: "webchat:operator", deliver: true, messageChannel: "telegram", to: "@x" };
    expect(await forbidden("agent", delivering)).toBe("FORBIDDEN");
    expect(await forbidden("agent", { ...delivering, sessionKey: "e2e:node" }, node)).toBe("FORBIDDEN");
  });

  it("sends events only to the roles whose table has their family", async () => {
    const { client: control } = await as("control", 1);
    const { client: node } = await as("node", 0);
    const { client: webchat } = await as("webchat", 0);
    const { client: nodeB } = await as("node", 1);

    // Pairing news reaches control connections only.
    const asking = await askToPair(gw.wsUrl(0), { deviceId: "events-probe", localAddress: "127.0.0.92" });
    clients.push(asking.client);
    await controlEvent(control, "node.pair.requested", "events-probe");
    // A session one node watches: its events reach it, not the others.
    expect((await node.request("sessions.subscribe", { key: "e2e:watched" })).ok).toBe(true);
    const runId = `ev-${Date.now()}`;
    expect((await send(control, "agent", { message: "hello", sessionKey: "e2e:watched", runId })).ok).toBe(true);
    await node.next((f) => f.event === "session.created" && f.payload?.key === "e2e:watched");
    await control.next((f) => f.event === "agent" && f.payload?.runId === runId);
    await control.request("node.pair.reject", { requestId: asking.requestId });
    await controlEvent(control, "node.pair.resolved", "events-probe");

    for (const [name, client] of [["node", node], ["webchat", webchat], ["node on edge B", nodeB]] as const) {
      await expect(client.next(isEventOf("node.pair."), 300), name).rejects.toThrow(/no matching frame/);
      await expect(client.next(isEventOf("agent"), 50), name).rejects.toThrow(/no matching frame/);
    }
    await expect(webchat.next(isEventOf("session."), 50)).rejects.toThrow(/no matching frame/);
    await expect(nodeB.next(isEventOf("session."), 50)).rejects.toThrow(/no matching frame/);
  });

  it("keeps pairing connections to role node and without a credential", async () => {
    const client = await WsClient.open(gw.wsUrl(1), { localAddress: "127.0.0.93" });
    clients.push(client);
    expect((await client.request("connect", { role: "control", pairing: true })).error).toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringMatching(/params\.pairing: pairing is for role node only/),
    });
    expect((await client.request("connect", { role: "node", pairing: true, auth: { token: TOKEN } })).error).toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringMatching(/presents no credential/),
    });
  });
});
