import { createHash, randomBytes } from "node:crypto";
import { connectNats } from "@gw/bus";
import { createJetStreamDurableStore } from "@gw/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askToPair, connectDevice, controlEvent, deviceKey, pairDevice, pairResult, signChallenge } from "./fixtures/devices.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

/** The device's record as the edges keep it: JetStream KV bucket `gw_devices`, read beside the gateway. */
async function storedDevice(gw: GatewayUnderTest, deviceId: string): Promise<string | null> {
  const nc = await connectNats({ url: gw.nats!.url });
  const durable = createJetStreamDurableStore(nc);
  try {
    const entry = await (await durable.kv("devices")).get(deviceId);
    return entry === null ? null : Buffer.from(entry.value).toString("utf8");
  } finally {
    await durable.close();
    await nc.close();
  }
}

/** A well-formed token of `deviceId` with a made-up secret: what someone guessing would send. */
function guessedToken(deviceId: string, tokenId = "AAAAAAAAAAAA"): string {
  return `gwd1.${Buffer.from(deviceId).toString("base64url")}.${tokenId}.${randomBytes(32).toString("base64url")}`;
}

describe("device pairing and device tokens across two edges (distributed)", () => {
  let gw: GatewayUnderTest;
  let control: WsClient;
  const clients: WsClient[] = [];
  const track = <T extends { client: WsClient }>(x: T) => (clients.push(x.client), x);

  beforeAll(async () => {
    gw = await startGateway("distributed", {
      edges: 2,
      gateway: { pairing: { pendingTtlSeconds: 60, maxPendingPerIp: 2 } },
    });
    control = await WsClient.open(gw.wsUrl(1));
    clients.push(control);
    expect((await control.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("pairs a device that asked on edge A through an approval on edge B; its token works on both", async () => {
    const deviceId = "kitchen-speaker";
    const key = deviceKey();
    const asking = track(await askToPair(gw.wsUrl(0), { deviceId, name: "Kitchen speaker", key, localAddress: "127.0.0.71" }));
    expect(asking.answer).toMatchObject({ ok: true, payload: { deviceId, status: "pending", expiresAt: expect.any(Number) } });
    const requestId = asking.requestId!;
    const requested = await controlEvent(control, "node.pair.requested", deviceId);
    expect(requested).toMatchObject({ requestId, name: "Kitchen speaker", clientIp: "127.0.0.71", keyFingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect((await control.request("node.pair.list")).payload?.requests).toContainEqual(expect.objectContaining({ requestId, deviceId }));
    // Until it is paired, the device may only wait.
    expect((await asking.client.request("agents.list")).error).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/pairing connection/) });

    expect(await control.request("node.pair.approve", { requestId })).toMatchObject({
      ok: true,
      payload: { requestId, deviceId, status: "approved", pairedAt: expect.any(Number) },
    });
    const result = await pairResult(asking.client);
    expect(result).toMatchObject({ requestId, deviceId, status: "approved", token: expect.stringMatching(/^gwd1\./) });
    expect((await asking.client.waitClosed()).code).toBe(1000);
    expect(await controlEvent(control, "node.pair.resolved", deviceId)).toEqual({ requestId, deviceId, status: "approved" });
    expect((await control.request("node.pair.list")).payload?.requests).toEqual([]);
    const token = String(result.token);

    for (const edge of [0, 1]) {
      const device = track(await connectDevice(gw.wsUrl(edge), token, { localAddress: "127.0.0.71" }));
      expect(device.answer.payload, `edge ${edge}`).toMatchObject({ role: "node", auth: { method: "device", deviceId } });
      expect((await device.client.request("agents.list")).ok).toBe(true);
      device.client.close();
    }
    // Stored hashed, shared by the edges: the record has the token's SHA-256, never the token.
    const stored = (await storedDevice(gw, deviceId))!;
    expect(stored).toContain(createHash("sha256").update(token).digest("hex"));
    expect(stored).not.toContain(token.split(".")[3]);
    expect((await control.request("device.list")).payload?.devices).toContainEqual({
      deviceId,
      name: "Kitchen speaker",
      keyFingerprint: requested.keyFingerprint,
      pairedAt: expect.any(Number),
      rotatedAt: expect.any(Number),
      pairedFrom: "127.0.0.71",
    });

    // A node's credential only: not for another role, not a bearer token over HTTP.
    const asControl = track(await connectDevice(gw.wsUrl(1), token, { role: "control", localAddress: "127.0.0.72" }));
    expect(asControl.answer.error).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(/role node only/) });
    const http = await httpRequest(`${gw.httpUrl(0)}/v1/models`, { headers: { authorization: `Bearer ${token}` }, localAddress: "127.0.0.72" });
    expect(http.status).toBe(401);
    // Paired already: asking again is refused until it is revoked.
    const again = track(await askToPair(gw.wsUrl(1), { deviceId, localAddress: "127.0.0.73" }));
    expect(again.answer.error).toMatchObject({ code: "CONFLICT" });
  });

  it("refuses a pairing signature made for another socket", async () => {
    const key = deviceKey();
    const client = await WsClient.open(gw.wsUrl(0), { localAddress: "127.0.0.74" });
    clients.push(client);
    await client.request("connect", { role: "node", pairing: true });
    const res = await client.request("node.pair.request", {
      deviceId: "replayed",
      name: "Replayed",
      publicKey: key.publicKey,
      signature: signChallenge(key, "some-other-connection", "replayed"),
    });
    expect(res.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/params\.signature/) });
  });

  it("rotates a token: the old one is refused at once on both edges and its open sockets are closed", async () => {
    const deviceId = "hall-panel";
    const first = await pairDevice(gw.wsUrl(1), control, deviceId, "127.0.0.75");
    const onA = track(await connectDevice(gw.wsUrl(0), first, { localAddress: "127.0.0.75" }));
    const onB = track(await connectDevice(gw.wsUrl(1), first, { localAddress: "127.0.0.75" }));
    expect([onA.answer.ok, onB.answer.ok]).toEqual([true, true]);

    const rotated = await control.request("device.token.rotate", { deviceId });
    expect(rotated).toMatchObject({ ok: true, payload: { deviceId, token: expect.stringMatching(/^gwd1\./), rotatedAt: expect.any(Number) } });
    const second = String(rotated.payload!.token);
    const closedA = await onA.client.waitClosed(3_000);
    const closedB = await onB.client.waitClosed(3_000);
    expect([closedA, closedB]).toEqual([
      { code: 4001, reason: "device token rotated" },
      { code: 4001, reason: "device token rotated" },
    ]);
    expect(await controlEvent(control, "device.token.rotated", deviceId)).toMatchObject({ rotatedAt: rotated.payload!.rotatedAt });
    for (const edge of [0, 1]) {
      const old = track(await connectDevice(gw.wsUrl(edge), first, { localAddress: "127.0.0.76" }));
      expect(old.answer.error, `old token, edge ${edge}`).toMatchObject({ code: "UNAUTHORIZED" });
      const fresh = track(await connectDevice(gw.wsUrl(edge), second, { localAddress: "127.0.0.76" }));
      expect(fresh.answer.ok, `new token, edge ${edge}`).toBe(true);
    }

    // The device rotates its own token: the asking socket keeps going, its other sockets close.
    const asker = track(await connectDevice(gw.wsUrl(0), second, { localAddress: "127.0.0.75" }));
    const other = track(await connectDevice(gw.wsUrl(1), second, { localAddress: "127.0.0.75" }));
    const own = await asker.client.request("device.token.rotate", { deviceId });
    expect(own.ok, JSON.stringify(own.error)).toBe(true);
    expect((await other.client.waitClosed(3_000)).code).toBe(4001);
    expect((await asker.client.request("agents.list")).ok).toBe(true);
    expect(asker.client.closed).toBeUndefined();
    expect((await asker.client.request("device.token.rotate", { deviceId: "kitchen-speaker" })).error).toMatchObject({ code: "FORBIDDEN" });
    const third = track(await connectDevice(gw.wsUrl(1), String(own.payload!.token), { localAddress: "127.0.0.75" }));
    expect(third.answer.ok).toBe(true);
  });

  it("revokes a device: its sockets close and its token is refused everywhere", async () => {
    const deviceId = "garage-door";
    const token = await pairDevice(gw.wsUrl(0), control, deviceId, "127.0.0.77");
    const device = track(await connectDevice(gw.wsUrl(0), token, { localAddress: "127.0.0.77" }));
    expect(await control.request("device.revoke", { deviceId })).toMatchObject({ ok: true, payload: { deviceId, revoked: true } });
    expect(await device.client.waitClosed(3_000)).toEqual({ code: 4001, reason: "device revoked" });
    expect(await controlEvent(control, "device.revoked", deviceId)).toEqual({ deviceId });
    expect(await storedDevice(gw, deviceId)).toBeNull();
    for (const edge of [0, 1]) {
      expect((track(await connectDevice(gw.wsUrl(edge), token, { localAddress: "127.0.0.77" }))).answer.error).toMatchObject({ code: "UNAUTHORIZED" });
    }
    expect((await control.request("device.revoke", { deviceId })).error).toMatchObject({ code: "NOT_FOUND" });
    // Revoked, it may be paired again, with a new token.
    const again = await pairDevice(gw.wsUrl(1), control, deviceId, "127.0.0.77");
    expect(again).not.toBe(token);
    expect((track(await connectDevice(gw.wsUrl(0), again, { localAddress: "127.0.0.77" }))).answer.ok).toBe(true);
  });

  it("tells a rejected device, and drops a request whose device left, on either edge", async () => {
    const rejected = track(await askToPair(gw.wsUrl(0), { deviceId: "stranger", localAddress: "127.0.0.78" }));
    expect(await control.request("node.pair.reject", { requestId: rejected.requestId })).toMatchObject({
      ok: true,
      payload: { deviceId: "stranger", status: "rejected" },
    });
    expect(await pairResult(rejected.client)).toEqual({ requestId: rejected.requestId, deviceId: "stranger", status: "rejected" });
    expect((await rejected.client.waitClosed()).code).toBe(1000);
    expect(await controlEvent(control, "node.pair.resolved", "stranger")).toMatchObject({ status: "rejected" });

    const leaving = track(await askToPair(gw.wsUrl(0), { deviceId: "leaver", localAddress: "127.0.0.78" }));
    await controlEvent(control, "node.pair.requested", "leaver");
    leaving.client.close();
    expect(await controlEvent(control, "node.pair.resolved", "leaver")).toMatchObject({ requestId: leaving.requestId, status: "withdrawn" });
    expect((await control.request("node.pair.approve", { requestId: leaving.requestId })).error).toMatchObject({ code: "NOT_FOUND" });
    expect(await storedDevice(gw, "leaver")).toBeNull();
  });

  it("limits pending requests per client IP across both edges", async () => {
    const ip = "127.0.0.79";
    const one = track(await askToPair(gw.wsUrl(0), { deviceId: "lim-1", localAddress: ip }));
    const two = track(await askToPair(gw.wsUrl(1), { deviceId: "lim-2", localAddress: ip }));
    expect([one.answer.ok, two.answer.ok]).toEqual([true, true]);
    const three = track(await askToPair(gw.wsUrl(0), { deviceId: "lim-3", localAddress: ip }));
    expect(three.answer.error).toMatchObject({
      code: "RATE_LIMITED",
      details: { limit: "pairing.maxPendingPerIp", max: 2 },
    });
    // Another address is not affected; and a freed slot can be used again.
    const elsewhere = track(await askToPair(gw.wsUrl(1), { deviceId: "lim-3", localAddress: "127.0.0.80" }));
    expect(elsewhere.answer.ok).toBe(true);
    one.client.close();
    await controlEvent(control, "node.pair.resolved", "lim-1");
    const four = track(await askToPair(gw.wsUrl(1), { deviceId: "lim-4", localAddress: ip }));
    expect(four.answer.ok, JSON.stringify(four.answer.error)).toBe(true);
  });

  it("counts guessed device tokens toward the failed-auth limit, on both edges", async () => {
    const ip = "127.0.0.81";
    const token = await pairDevice(gw.wsUrl(0), control, "safe-box", "127.0.0.82");
    const tokenId = token.split(".")[2];
    for (let i = 0; i < 20; i++) {
      const { client, answer } = await connectDevice(gw.wsUrl(i % 2), guessedToken("safe-box", i % 3 === 0 ? tokenId : undefined), { localAddress: ip });
      client.close();
      expect(answer.error?.code, `guess ${i + 1}`).toBe("UNAUTHORIZED");
    }
    // Blocked on both edges now, even with the right token.
    for (const edge of [0, 1]) {
      const refused = await WsClient.open(gw.wsUrl(edge), { localAddress: ip }).catch((err: unknown) => err);
      expect(refused, `edge ${edge}`).toMatchObject({ status: 429 });
    }
    // The device itself, from its own address, is unaffected.
    expect((track(await connectDevice(gw.wsUrl(1), token, { localAddress: "127.0.0.82" }))).answer.ok).toBe(true);
  });
});

describe("device pairing in one process (embedded)", () => {
  let gw: GatewayUnderTest;
  let control: WsClient;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    gw = await startGateway("embedded", { gateway: { pairing: { pendingTtlSeconds: 2 }, limits: { preConnectTimeoutMs: 2_000 } } });
    control = await WsClient.open(gw.wsUrl());
    clients.push(control);
    expect((await control.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("pairs, authenticates and rotates with the files under the data dir", async () => {
    const token = await pairDevice(gw.wsUrl(), control, "desk-lamp", "127.0.0.83");
    const device = await connectDevice(gw.wsUrl(), token, { localAddress: "127.0.0.83" });
    clients.push(device.client);
    expect(device.answer.payload).toMatchObject({ auth: { method: "device", deviceId: "desk-lamp" } });
    const rotated = await control.request("device.token.rotate", { deviceId: "desk-lamp" });
    expect((await device.client.waitClosed(3_000)).code).toBe(4001);
    const again = await connectDevice(gw.wsUrl(), String(rotated.payload!.token), { localAddress: "127.0.0.83" });
    clients.push(again.client);
    expect(again.answer.ok).toBe(true);
  });

  it("expires a pending request after gateway.pairing.pendingTtlSeconds and tells both sides", async () => {
    const asking = await askToPair(gw.wsUrl(), { deviceId: "slow-device", localAddress: "127.0.0.84" });
    clients.push(asking.client);
    expect(asking.answer.ok).toBe(true);
    const expiresAt = Number(asking.answer.payload!.expiresAt);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(2_000);
    expect(await pairResult(asking.client, 5_000)).toEqual({ requestId: asking.requestId, deviceId: "slow-device", status: "expired" });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - 50);
    expect((await asking.client.waitClosed()).code).toBe(1000);
    expect(await controlEvent(control, "node.pair.resolved", "slow-device")).toMatchObject({ status: "expired" });
    expect((await control.request("node.pair.approve", { requestId: asking.requestId })).error).toMatchObject({ code: "NOT_FOUND" });
  });

  it("closes a pairing connection that never asks", async () => {
    const client = await WsClient.open(gw.wsUrl(), { localAddress: "127.0.0.85" });
    clients.push(client);
    expect((await client.request("connect", { role: "node", pairing: true })).ok).toBe(true);
    expect(await client.waitClosed(5_000)).toEqual({ code: 4008, reason: "no pairing request" });
  });
});
