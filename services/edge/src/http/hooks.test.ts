import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import { defaultConfig, type DeepPartial, type GatewayConfigInput } from "@gw/config";
import {
  GATEWAY_VERSION,
  GatewayError,
  type HookAccepted,
  type HookAgentRequest,
  type HookMappingRequest,
  type HookWakeRequest,
  RPC,
} from "@gw/contracts";
import { createLogger, createMetrics } from "@gw/runtime";
import { InProcessRunEventLog, InProcessRunQueue, RunRegistry } from "@gw/runs";
import { createFileDurableStore, createMemoryFastStore } from "@gw/store";
import { afterEach, describe, expect, it } from "vitest";
import { type Edge, startEdge } from "../edge.js";

const HOOK_TOKEN = "hook-token-0123456789";
const GATEWAY_TOKEN = "gateway-token-0123456789";

interface Seen {
  wake: HookWakeRequest[];
  agent: HookAgentRequest[];
  mapping: HookMappingRequest[];
}

interface Started {
  edge: Edge;
  seen: Seen;
  close(): Promise<void>;
}

const accepted = (over: Partial<HookAccepted>): HookAccepted => ({
  action: "agent",
  runId: "run-1",
  sessionKey: "hook:x",
  wakeMode: "now",
  duplicate: false,
  ...over,
});

/**
 * A real edge with hooks enabled and a stand-in hooks service that records what reaches it.
 * `counterDelayMs` makes every failed-auth counter call as slow as a Redis round trip that long.
 */
async function start(overrides: DeepPartial<GatewayConfigInput> = {}, counterDelayMs = 0): Promise<Started> {
  const config = defaultConfig({
    gateway: { auth: { token: GATEWAY_TOKEN }, limits: { failedAuthMax: 5 } },
    ...overrides,
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      maxBodyBytes: 1_000,
      mappings: [{ path: "github", action: { kind: "agent" } }, { path: "alerts/disk", action: { kind: "wake" } }],
      ...overrides.hooks,
    },
  });
  const bus = new InProcessBus();
  const subjects = createSubjects();
  const memory = createMemoryFastStore();
  const slow = <A extends unknown[], R>(op: (...args: A) => Promise<R>) => async (...args: A) => {
    await sleep(counterDelayMs);
    return op(...args);
  };
  const { counters } = memory;
  const fastStore = { ...memory, counters: { ...counters, hit: slow(counters.hit), giveBack: slow(counters.giveBack) } };
  const runQueue = new InProcessRunQueue();
  const seen: Seen = { wake: [], agent: [], mapping: [] };
  const served = [
    serveRpc(bus, subjects, RPC.hooksWake, (req) => {
      seen.wake.push(req);
      return accepted({ action: "wake", runId: req.mode === "now" ? "turn-1" : "", sessionKey: "hook:main", wakeMode: req.mode });
    }),
    serveRpc(bus, subjects, RPC.hooksAgent, (req) => {
      seen.agent.push(req);
      return accepted({ wakeMode: req.wakeMode, duplicate: req.idempotencyKey === "seen-before" });
    }),
    serveRpc(bus, subjects, RPC.hooksMapping, (req) => {
      seen.mapping.push(req);
      if (req.path === "alerts/disk") throw new GatewayError("INVALID_REQUEST", "the message is empty for this request");
      return accepted({});
    }),
  ];
  const durableDir = mkdtempSync(join(tmpdir(), "gw-hooks-durable-"));
  const durable = await createFileDurableStore(durableDir);
  const edge = await startEdge(
    {
      config,
      bus,
      subjects,
      fastStore,
      durable,
      runs: { queue: runQueue, registry: new RunRegistry(fastStore), events: new InProcessRunEventLog({ bus, subjects }, { maxAgeMs: 60_000, maxBytes: 1_048_576 }) },
      logger: createLogger({ service: "edge", level: "silent" }),
      metrics: createMetrics({ service: "edge", collectDefault: false }),
      edgeId: "hooks-test",
      version: GATEWAY_VERSION,
      isHealthy: () => true,
    },
    { host: "127.0.0.1", port: 0 },
  );
  return {
    edge,
    seen,
    close: async () => {
      await edge.close();
      for (const stop of served) stop();
      await runQueue.close();
      await bus.close();
      await fastStore.close();
      await durable.close();
      rmSync(durableDir, { recursive: true, force: true });
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
}

/**
 * One HTTP request from a loopback address of the test's choosing (each test its own, so the
 * failed-auth limiter's counts do not mix). `chunked` sends the body without Content-Length.
 */
function post(
  edge: Edge,
  path: string,
  opts: { body?: string; headers?: Record<string, string>; from?: string; chunked?: boolean; method?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...opts.headers };
    if (!opts.chunked && opts.body !== undefined) headers["content-length"] = String(Buffer.byteLength(opts.body));
    const req = httpRequest(
      { host: "127.0.0.1", port: edge.port, path, method: opts.method ?? "POST", headers, localAddress: opts.from ?? "127.0.0.1" },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
      },
    );
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer for ${path}`)));
    req.on("error", reject);
    if (opts.chunked && opts.body !== undefined) {
      // Two writes: Node then sends Transfer-Encoding: chunked.
      req.write(opts.body.slice(0, 10));
      req.end(opts.body.slice(10));
    } else req.end(opts.body);
  });
}

const bearer = { authorization: `Bearer ${HOOK_TOKEN}` };
const xToken = { "x-gateway-token": HOOK_TOKEN };
const errorType = (a: Answer) => (a.json.error as { type?: string } | undefined)?.type;
const errorMessage = (a: Answer) => (a.json.error as { message?: string } | undefined)?.message;

let started: Started | undefined;
afterEach(async () => {
  await started?.close();
  started = undefined;
});

describe("the hooks plugin at the edge", () => {
  it("takes the hook token in either header and hands validated requests, with SPEC's defaults, to the hooks service", async () => {
    started = await start();
    const { edge, seen } = started;
    const wake = await post(edge, "/hooks/wake", { headers: bearer, body: JSON.stringify({ text: "deploy done" }) });
    expect(wake).toMatchObject({ status: 200, json: { ok: true, mode: "now", sessionKey: "hook:main", runId: "turn-1" } });
    const queued = await post(edge, "/hooks/wake", { headers: xToken, body: JSON.stringify({ text: "later", mode: "next-heartbeat" }) });
    expect(queued.json).toEqual({ ok: true, mode: "next-heartbeat", sessionKey: "hook:main" });
    const agent = await post(edge, "/hooks/agent", { headers: xToken, body: JSON.stringify({ message: "hi", extra: "ignored" }) });
    expect(agent).toMatchObject({ status: 202, json: { ok: true, runId: "run-1", sessionKey: "hook:x", wakeMode: "now" } });
    expect(seen.agent[0]).toMatchObject({ message: "hi", deliver: true, wakeMode: "now" });
    // What the body did not give is absent on the bus too (proto3 optional), not "" or 0.
    expect([seen.agent[0]?.name, seen.agent[0]?.sessionKey, seen.agent[0]?.timeoutSeconds]).toEqual([undefined, undefined, undefined]);
    const mapped = await post(edge, "/hooks/github?ref=main", {
      headers: { ...bearer, "x-github-event": "issues", cookie: "c=1", "idempotency-key": "d-1" },
      body: JSON.stringify({ action: "opened" }),
    });
    expect(mapped.status).toBe(202);
    const forwarded = seen.mapping[0]!;
    expect(forwarded).toMatchObject({ path: "github", query: { ref: "main" }, idempotencyKey: "d-1" });
    expect(JSON.parse(Buffer.from(forwarded.payloadJson).toString())).toEqual({ action: "opened" });
    expect(forwarded.headers["x-github-event"]).toBe("issues");
    for (const secret of ["authorization", "x-gateway-token", "cookie"]) expect(forwarded.headers).not.toHaveProperty(secret);
    expect(seen.wake.map((w) => [w.text, w.mode])).toEqual([["deploy done", "now"], ["later", "next-heartbeat"]]);
  });

  it("refuses a wrong or missing token, the gateway's own token and a local caller without one, and counts each", async () => {
    started = await start();
    const { edge, seen } = started;
    const from = "127.0.0.21";
    const refused = [
      await post(edge, "/hooks/wake", { from, headers: { authorization: "Bearer wrong" }, body: "{}" }),
      await post(edge, "/hooks/agent", { from, headers: { "x-gateway-token": "wrong" }, body: "{}" }),
      await post(edge, "/hooks/github", { from, headers: { authorization: `Bearer ${GATEWAY_TOKEN}` }, body: "{}" }),
      await post(edge, "/hooks/wake", { from, headers: { host: "localhost" }, body: "{}" }),
      await post(edge, "/hooks/nope", { from, body: "{}" }),
    ];
    expect(refused.map((a) => [a.status, errorType(a)])).toEqual(Array(5).fill([401, "authentication_error"]));
    // failedAuthMax is 5: the IP is now blocked, even with the right token.
    const blocked = await post(edge, "/hooks/wake", { from, headers: bearer, body: JSON.stringify({ text: "x" }) });
    expect(blocked.status).toBe(429);
    expect(blocked.headers["retry-after"]).toMatch(/^\d+$/);
    expect(seen).toEqual({ wake: [], agent: [], mapping: [] });
  });

  it("checks at most failedAuthMax of many wrong hook tokens arriving together, and refuses the right one among them", async () => {
    started = await start({}, 20);
    const { edge, seen } = started;
    const from = "127.0.0.22";
    const tokens = [...Array.from({ length: 30 }, (_, i) => `wrong-${i}`), HOOK_TOKEN];
    const answers = await Promise.all(
      tokens.map((token) => post(edge, "/hooks/wake", { from, headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ text: "x" }) })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses[30]).toBe(429);
    expect(seen.wake).toEqual([]);
  });

  it("compares query values with the token only once the header holds it (else each would be an uncounted guess)", async () => {
    started = await start();
    const { edge, seen } = started;
    const from = "127.0.0.23";
    const guessing = await post(edge, `/hooks/wake?a=guess&b=${HOOK_TOKEN}`, { from, body: JSON.stringify({ text: "x" }) });
    expect([guessing.status, errorType(guessing)]).toEqual([401, "authentication_error"]);
    const careless = await post(edge, `/hooks/wake?b=${HOOK_TOKEN}`, { from, headers: bearer, body: JSON.stringify({ text: "x" }) });
    expect([careless.status, errorType(careless)]).toEqual([400, "invalid_request_error"]);
    expect(seen.wake).toEqual([]);
  });

  it("refuses a token in the query string, even the right one", async () => {
    started = await start();
    const { edge, seen } = started;
    for (const query of [`?token=${HOOK_TOKEN}`, "?Token=anything", `?secret=${HOOK_TOKEN}`]) {
      const answer = await post(edge, `/hooks/wake${query}`, { headers: bearer, body: JSON.stringify({ text: "x" }) });
      expect([answer.status, errorType(answer)]).toEqual([400, "invalid_request_error"]);
      expect(errorMessage(answer)).toContain("never in the URL");
    }
    expect(seen.wake).toEqual([]);
  });

  it("answers 413 for a body over hooks.maxBodyBytes, declared or streamed, before anything reads it", async () => {
    started = await start();
    const { edge, seen } = started;
    const big = JSON.stringify({ text: "x".repeat(2_000) });
    const declared = await post(edge, "/hooks/wake", { headers: bearer, body: big });
    const streamed = await post(edge, "/hooks/github", { headers: bearer, body: big, chunked: true });
    expect([declared.status, errorType(declared)]).toEqual([413, "invalid_request_error"]);
    expect(streamed.status).toBe(413);
    const fits = await post(edge, "/hooks/wake", { headers: bearer, body: JSON.stringify({ text: "x".repeat(900) }) });
    expect(fits.status).toBe(200);
    expect(seen.wake).toHaveLength(1);
    expect(seen.mapping).toEqual([]);
  });

  it("reads any content type as JSON, refuses what is not JSON, and validates the built-in bodies", async () => {
    started = await start();
    const { edge, seen } = started;
    const plain = await post(edge, "/hooks/github", { headers: { ...bearer, "content-type": "text/plain" }, body: '{"a":1}' });
    expect(plain.status).toBe(202);
    const invalid = await post(edge, "/hooks/github", { headers: bearer, body: "{not json" });
    expect([invalid.status, errorType(invalid)]).toEqual([400, "invalid_request_error"]);
    expect(errorMessage(invalid)).toContain("not valid JSON");
    const deep = await post(edge, "/hooks/github", { headers: bearer, body: "[".repeat(100) + "]".repeat(100) });
    expect(deep.status).toBe(400);
    const empty = await post(edge, "/hooks/github", { headers: bearer });
    expect(empty.status).toBe(202);
    expect(Buffer.from(seen.mapping.at(-1)!.payloadJson).toString()).toBe("{}");
    const noText = await post(edge, "/hooks/wake", { headers: bearer, body: JSON.stringify({ mode: "now" }) });
    expect([noText.status, errorMessage(noText)]).toEqual([400, "body.text: text is required (a string)"]);
    const badMode = await post(edge, "/hooks/agent", { headers: bearer, body: JSON.stringify({ message: "m", wakeMode: "soon", deliver: "yes" }) });
    expect(badMode.status).toBe(400);
    expect(errorMessage(badMode)).toContain("wakeMode");
    const badKey = await post(edge, "/hooks/agent", { headers: bearer, body: JSON.stringify({ message: "m", sessionKey: "nocolon" }) });
    expect(errorMessage(badKey)).toContain("<prefix>:<identifier>");
    expect(seen.wake).toEqual([]);
    expect(seen.agent).toEqual([]);
    expect(seen.mapping).toHaveLength(2);
  });

  it("answers 404 for unknown hooks once the token is right, passes on the service's errors and marks repeats", async () => {
    started = await start();
    const { edge, seen } = started;
    for (const path of ["/hooks/nope", "/hooks/wake/more", "/hooks/github/x"]) {
      const answer = await post(edge, path, { headers: bearer, body: "{}" });
      expect([path, answer.status, errorType(answer)]).toEqual([path, 404, "invalid_request_error"]);
    }
    expect((await post(edge, "/hooks/wake", { method: "GET", headers: bearer })).status).toBe(404);
    const refused = await post(edge, "/hooks/alerts/disk", { headers: bearer, body: "{}" });
    expect([refused.status, errorMessage(refused)]).toEqual([400, "the message is empty for this request"]);
    const repeat = await post(edge, "/hooks/agent", { headers: { ...bearer, "idempotency-key": "seen-before" }, body: JSON.stringify({ message: "m" }) });
    expect(repeat.json).toMatchObject({ ok: true, duplicate: true });
    expect(seen.mapping.map((m) => m.path)).toEqual(["alerts/disk"]);
  });

  it("serves hooks under hooks.path, and nothing at all while hooks are disabled", async () => {
    started = await start({ hooks: { path: "/in/hooks" } });
    expect((await post(started.edge, "/in/hooks/wake", { headers: bearer, body: JSON.stringify({ text: "x" }) })).status).toBe(200);
    expect((await post(started.edge, "/hooks/wake", { headers: bearer, body: JSON.stringify({ text: "x" }) })).status).toBe(404);
    await started.close();
    started = await start({ hooks: { enabled: false } });
    expect((await post(started.edge, "/hooks/wake", { headers: bearer, body: JSON.stringify({ text: "x" }) })).status).toBe(404);
  });
});
