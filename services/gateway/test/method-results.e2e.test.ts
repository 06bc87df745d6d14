import { describeIssues, METHOD_RESULTS, type MethodName } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askToPair, pairResult } from "./fixtures/devices.js";
import { MODES, TOKEN } from "./fixtures/gateway.js";
import { type OperatorGateway, startOperatorGateway } from "./fixtures/operator.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * What proves the result schemas true (METHOD_RESULTS in @gw/contracts, which the edge's
 * handlers, the API documents and @gw/client are typed by): a real answer of a representative
 * call of every method, over the WebSocket, parses against its method's schema and loses
 * nothing in the parse (no field the schema does not describe). A method added to
 * METHOD_RESULTS gets its call here too.
 */
describe.each(MODES)("every WebSocket method's answer is what its result schema says (%s)", { timeout: 120_000 }, (mode) => {
  let op: OperatorGateway;
  let control: WsClient;
  const answers = new Map<MethodName, unknown>();

  /** Calls `method`, which must answer ok, and keeps the answer for the check. */
  async function call(method: MethodName, params: Record<string, unknown> = {}, client: WsClient = control): Promise<Record<string, unknown>> {
    const frame = await client.request(method, params, 30_000);
    expect(frame.error, `${method}: ${JSON.stringify(frame.error)}`).toBeUndefined();
    answers.set(method, frame.payload);
    return frame.payload!;
  }

  beforeAll(async () => {
    // One hooks replica in distributed mode: it serves the cron methods.
    op = await startOperatorGateway(mode, { hooksReplicas: 1 });
    control = await WsClient.open(op.gw.wsUrl(0));
    const hello = await control.connect(TOKEN);
    expect(hello.ok, JSON.stringify(hello.error)).toBe(true);
    answers.set("connect", hello.payload);
  });
  afterAll(async () => {
    control?.close();
    await op?.stop();
  });

  it("runs, their events and aborts", async () => {
    const runId = `results-${mode}`;
    await call("agents.list");
    await call("agent.identity.get", { agentId: "main" });
    await call("agent", { message: "hello", sessionKey: "results:run", agentId: "main", runId });
    await call("agent.wait", { runId, timeoutSeconds: 10 });
    await call("agent.subscribe", { runId, afterSeq: 0 });
    await call("agent.unsubscribe", { runId });
    await call("chat.abort", { runId });
    await call("agent.abort", { runId });
    await call("runs.list");
    await call("gateway.status");
    await call("tools.status");
    await call("models.status");
  });

  it("sessions", async () => {
    const key = "results:run";
    await call("sessions.list");
    await call("sessions.preview", { key });
    await call("sessions.patch", { key, thinking: "high" });
    await call("sessions.compact", { key });
    await call("sessions.subscribe", { key });
    await call("sessions.unsubscribe", { key });
    await call("sessions.reset", { key });
    await call("sessions.delete", { key });
  });

  it("delivery and the senders waiting for approval", async () => {
    await call("send", { channel: "tg", to: "7015", message: "hello", idempotencyKey: `results-send-${mode}` });
    await call("poll", { channel: "tg", to: "7015", question: "Lunch?", options: ["Pizza", "Salad"], idempotencyKey: `results-poll-${mode}` });
    await call("channels.status");
    const approveCode = await op.strangerWrites(7002, "hi");
    const rejectCode = await op.strangerWrites(7003, "hi");
    await call("channels.pairing.list", { channel: "tg" });
    await call("channels.pairing.approve", { channel: "tg", code: approveCode });
    await call("channels.pairing.reject", { channel: "tg", code: rejectCode });
  });

  it("device pairing and device tokens", async () => {
    const asking = await askToPair(op.gw.wsUrl(0), { deviceId: `results-dev-${mode}` });
    expect(asking.answer.ok, JSON.stringify(asking.answer.error)).toBe(true);
    answers.set("node.pair.request", asking.answer.payload);
    await call("node.pair.list");
    await call("node.pair.approve", { requestId: asking.requestId });
    await pairResult(asking.client);
    asking.client.close();
    const refused = await askToPair(op.gw.wsUrl(0), { deviceId: `results-refused-${mode}` });
    await call("node.pair.reject", { requestId: refused.requestId });
    refused.client.close();
    await call("device.list");
    await call("device.token.rotate", { deviceId: `results-dev-${mode}` });
    await call("device.revoke", { deviceId: `results-dev-${mode}` });
  });

  it("scheduled runs", async () => {
    const id = `results-${mode}`;
    await call("cron.add", { id, schedule: "every 1h", agentId: "main", message: "tick" });
    await call("cron.list");
    await call("cron.update", { id, enabled: false });
    await call("cron.run", { id });
    await call("cron.remove", { id });
  });

  it("every method was called, and each answer parses against its schema and loses nothing in the parse", () => {
    expect([...answers.keys()].sort()).toEqual(Object.keys(METHOD_RESULTS).sort());
    for (const [method, payload] of answers) {
      const parsed = METHOD_RESULTS[method].safeParse(payload);
      expect(parsed.success, `${method}: ${parsed.success ? "" : describeIssues(parsed.error, "result")}`).toBe(true);
      expect(parsed.data, `${method} has fields its schema does not describe`).toEqual(payload);
    }
  });
});
