import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { TurnSlot } from "../src/heartbeat/turn-slot.js";
import { MAX_EVENT_CHARS, MAX_TURN_MESSAGE_BYTES } from "../src/heartbeat/turn-message.js";
import { type Harness, startHarness } from "./harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** waitFor takes any defined value as done: turn false into "not yet". */
const until = (cond: () => boolean, timeoutMs = 5_000) => waitFor(() => cond() || undefined, { timeoutMs });

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("POST /hooks/agent over the bus", () => {
  it("starts one run with SPEC's defaults: a fresh hook session, the default agent, the sender name", async () => {
    h = await startHarness();
    const first = await h.agent({ message: "summarise the build" });
    const second = await h.agent({ message: "again", name: "CI", agentId: "ops", model: "builtin/echo", thinking: "low", timeoutSeconds: 30 });
    expect(first).toMatchObject({ action: "agent", wakeMode: "now", duplicate: false });
    expect(first.sessionKey).toMatch(/^hook:[0-9a-f-]{36}$/);
    expect(second.sessionKey).not.toBe(first.sessionKey);
    await until(() => h!.runs.length === 2);
    expect(h.runs[0]).toMatchObject({ runId: first.runId, sessionKey: first.sessionKey, message: "summarise the build", sender: "Hook", agentId: undefined, deliver: false });
    expect(h.runs[1]).toMatchObject({ runId: second.runId, sender: "CI", agentId: "ops", model: "builtin/echo", thinking: "low", timeoutSeconds: 30 });
    // "Accepted" means registered and queued: the record is there when the answer is.
    expect(await h.registry.get(first.runId)).toMatchObject({ sessionKey: first.sessionKey, edgeId: "hooks" });
  });

  it("checks the delivery destination before anything runs, and refuses what cannot be delivered", async () => {
    h = await startHarness();
    const ok = await h.agent({ message: "m", deliver: true, channel: "tg", to: "@ops", sessionKey: "github:acme" });
    expect(h.deliveryChecks.at(-1)).toMatchObject({ validateOnly: true, message: { channel: "tg", to: "@ops", sessionKey: "github:acme" } });
    await expect(h.agent({ message: "m", deliver: true })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: "deliver: to is required (no recipient given, and the session key names none) (or send deliver: false)",
    });
    await expect(h.agent({ message: "m", deliver: true, channel: "nope", to: "1" })).rejects.toMatchObject({ code: "CHANNEL_NOT_FOUND" });
    await until(() => h!.runs.length === 1);
    await settle();
    expect(h.runs.map((r) => r.runId)).toEqual([ok.runId]);
    expect(h.runs[0]).toMatchObject({ deliver: true, messageChannel: "tg", to: "@ops" });
  });

  it("refuses unknown agents and providers, bad session keys and bad modes", async () => {
    h = await startHarness();
    await expect(h.agent({ message: "m", agentId: "ghost" })).rejects.toMatchObject({ code: "INVALID_REQUEST", message: 'agentId: unknown agent "ghost"' });
    await expect(h.agent({ message: "m", model: "acme/x" })).rejects.toMatchObject({ message: 'model: unknown provider "acme"' });
    await expect(h.agent({ message: "m", sessionKey: "nocolon" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(h.agent({ message: "m", wakeMode: "later" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(h.agent({ message: "" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await settle();
    expect(h.runs).toEqual([]);
  });

  it("with wakeMode next-heartbeat, stores the run and starts it with the next heartbeat, once", async () => {
    h = await startHarness();
    const accepted = await h.agent({ message: "later please", wakeMode: "next-heartbeat" });
    await settle();
    expect(h.runs).toEqual([]);
    expect(await h.registry.get(accepted.runId)).toBeNull();
    await h.service.heartbeat.beat();
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({ runId: accepted.runId, message: "later please" });
    await h.service.heartbeat.beat();
    await settle();
    expect(h.runs).toHaveLength(1);
  });

  it("answers a dispatch failure with UNAVAILABLE and records the run as failed", async () => {
    h = await startHarness();
    h.queue.failures = 1;
    await expect(h.agent({ message: "m" })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    const runId = h.queue.offered[0]!.runId;
    expect(await h.registry.get(runId)).toMatchObject({ state: "error", error: { code: "UNAVAILABLE" } });
  });
});

describe("POST /hooks/wake over the bus", () => {
  it("now: the main session runs at once with the text as a system event, and answers the turn's runId", async () => {
    h = await startHarness();
    const accepted = await h.wake("deploy finished");
    expect(accepted).toMatchObject({ action: "wake", wakeMode: "now", sessionKey: "hook:main" });
    await until(() => h!.runs.length === 1);
    const turn = h.runs[0]!;
    expect(turn).toMatchObject({ runId: accepted.runId, sessionKey: "hook:main", sender: "heartbeat", agentId: undefined, deliver: false });
    expect(turn.message).toMatch(/^Heartbeat: 1 system event since the last heartbeat, oldest first\.\n\[\d{4}-.*Z\] wake: deploy finished$/);
    expect(turn.extraSystemPrompt).toContain("started by the gateway's heartbeat");
  });

  it("next-heartbeat: queues texts durably; the next heartbeat takes them all once; an empty heartbeat runs nothing", async () => {
    h = await startHarness();
    const first = await h.wake("build 41 failed", "next-heartbeat");
    await h.wake("build 42 passed", "next-heartbeat");
    expect(first).toMatchObject({ action: "wake", wakeMode: "next-heartbeat", runId: "" });
    expect(await h.service.wake.size()).toBe(2);
    await settle();
    expect(h.runs).toEqual([]);
    const beat = await h.service.heartbeat.beat();
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]!.runId).toBe(beat.runId);
    expect(h.runs[0]!.message.split("\n").slice(1).map((line) => line.replace(/^\[.*?\] /, ""))).toEqual([
      "wake: build 41 failed",
      "wake: build 42 passed",
    ]);
    expect(await h.service.wake.size()).toBe(0);
    expect(await h.service.heartbeat.beat()).toEqual({ taken: [], busy: false });
    await settle();
    expect(h.runs).toHaveLength(1);
  });

  it("now takes earlier queued texts along, and the heartbeat delivers when configured", async () => {
    h = await startHarness({ heartbeat: { channel: "tg", to: "@ops" } });
    await h.wake("queued earlier", "next-heartbeat");
    const now = await h.wake("wake up");
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({ runId: now.runId, deliver: true, messageChannel: "tg", to: "@ops" });
    expect(h.runs[0]!.message).toMatch(/queued earlier\n.*wake up$/);
  });

  it("keeps the texts when the turn cannot be queued, and the next heartbeat runs that same turn once", async () => {
    h = await startHarness();
    h.queue.failures = 1;
    const accepted = await h.wake("survives an outage");
    expect(accepted.runId).toBe("");
    expect(await h.service.wake.size()).toBe(1);
    const beat = await h.service.heartbeat.beat();
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({ runId: beat.runId });
    expect(h.runs[0]!.message).toContain("survives an outage");
    expect(await h.service.heartbeat.beat()).toEqual({ taken: [], busy: false });
  });

  it("a turn half-started by a replica that died is finished by another, with the same run, once", async () => {
    h = await startHarness({}, { replicaId: "doomed" });
    await h.wake("one", "next-heartbeat");
    await h.wake("two", "next-heartbeat");
    h.queue.failures = 1;
    await expect(h.service.heartbeat.beat()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    // Registered but never queued: the slot holds the batch. The replica goes away.
    await h.service.stop();
    const other = await h.replica("survivor");
    const beat = await other.heartbeat.beat();
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]!.runId).toBe(beat.runId);
    expect(h.runs[0]!.message).toMatch(/wake: one\n.*wake: two$/);
    expect(await other.heartbeat.beat()).toEqual({ taken: [], busy: false });
    await settle();
    expect(h.runs).toHaveLength(1);
  });

  it("leaves a live replica's half-started turn alone", async () => {
    h = await startHarness({}, { replicaId: "busy" });
    await h.wake("one", "next-heartbeat");
    h.queue.failures = 1;
    await expect(h.service.heartbeat.beat()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    const other = await h.replica("other");
    expect(await other.heartbeat.beat()).toEqual({ taken: [], busy: true });
    expect((await h.service.heartbeat.beat()).taken).toHaveLength(1);
  });

  it("drops an unreadable queued text or deferred run instead of blocking every heartbeat after it", async () => {
    h = await startHarness();
    await (await h.durable.kv("hooks_wake")).create("000000000000001-broken", Buffer.from("{not json"));
    await (await h.durable.kv("hooks_deferred")).create("000000000000001-broken", Buffer.from([0xff, 0xff, 0xff]));
    await h.wake("still here", "next-heartbeat");
    const beat = await h.service.heartbeat.beat();
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({ runId: beat.runId, message: expect.stringMatching(/^Heartbeat: 1 system event .*still here$/s) });
    expect(await h.service.wake.size()).toBe(0);
    expect(await (await h.durable.kv("hooks_deferred")).keys()).toEqual([]);
    await settle();
    expect(h.runs).toHaveLength(1);
  });

  it("splits a backlog too big for one run request over successive turns, in order, each text once", async () => {
    h = await startHarness();
    // 24 texts of 48 KB (UTF-8): 1.15 MB in one message, over NATS's default max_payload.
    const texts = Array.from({ length: 24 }, (_, i) => `#${String(i).padStart(2, "0")} ${"€".repeat(MAX_EVENT_CHARS - 4)}`);
    for (const text of texts) await h.wake(text, "next-heartbeat");
    // A turn that cannot be queued is sent again by the next beat: the same run, the same texts.
    h.queue.failures = 1;
    await expect(h.service.heartbeat.beat()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    for (let beats = 0; (await h.service.wake.size()) > 0; beats++) {
      expect(beats).toBeLessThan(10);
      await h.service.heartbeat.beat();
    }
    await until(() => h!.runs.length === 5);
    expect(h.runs[0]).toMatchObject({ runId: h.queue.offered[0]!.runId, message: h.queue.offered[0]!.message });
    for (const run of h.runs) expect(Buffer.byteLength(run.message, "utf8")).toBeLessThanOrEqual(MAX_TURN_MESSAGE_BYTES);
    expect(h.runs.map((r) => r.message.split("\n").slice(1).length)).toEqual([5, 5, 5, 5, 4]);
    const taken = h.runs.flatMap((r) => r.message.split("\n").slice(1).map((line) => line.replace(/^\[.*?\] wake: /, "").slice(0, 3)));
    expect(taken).toEqual(texts.map((t) => t.slice(0, 3)));
    expect(await h.service.heartbeat.beat()).toEqual({ taken: [], busy: false });
  });

  it("narrows an oversized turn left in the slot (before turns were bounded) to what one request takes", async () => {
    h = await startHarness();
    for (let i = 0; i < 8; i++) await h.wake(`#${i} ${"€".repeat(MAX_EVENT_CHARS - 3)}`, "next-heartbeat");
    const keys = await h.service.wake.oldestKeys(100);
    const slot = new TurnSlot(await h.durable.kv("hooks_turn"));
    const stuck = { holder: "replica-gone", runId: "stuck-turn", nonce: "n1", keys, createdAt: Date.now() };
    expect(await slot.take(stuck, await slot.read())).not.toBeNull();
    expect(await h.service.heartbeat.beat()).toMatchObject({ runId: "stuck-turn", taken: keys.slice(0, 5) });
    expect((await h.service.heartbeat.beat()).taken).toEqual(keys.slice(5));
    await until(() => h!.runs.length === 2);
    expect(h.runs.map((r) => r.message.match(/wake: #\d/g)!.join(","))).toEqual(["wake: #0,wake: #1,wake: #2,wake: #3,wake: #4", "wake: #5,wake: #6,wake: #7"]);
  });

  it("beats on its own every interval, one replica per interval", async () => {
    h = await startHarness({ heartbeat: { intervalSeconds: 1 } });
    const second = await h.replica("second");
    const beats: number[] = [];
    for (const heartbeat of [h.service.heartbeat, second.heartbeat]) {
      const beat = heartbeat.beat.bind(heartbeat);
      heartbeat.beat = () => {
        beats.push(Date.now());
        return beat();
      };
    }
    await h.wake("tick", "next-heartbeat");
    await until(() => h!.runs.length === 1);
    await h.wake("tock", "next-heartbeat");
    await until(() => h!.runs.length === 2);
    expect(h.runs.map((r) => r.message.split(": ").at(-1))).toEqual(["tick", "tock"]);
    // A beat starts just after its interval's boundary (timers may fire a millisecond early).
    const slots = beats.map((at) => Math.round(at / 1_000));
    expect(new Set(slots).size).toBe(slots.length);
  });
});

describe("delivered once per id", () => {
  it("the same Idempotency-Key three times runs once and answers the first result", async () => {
    h = await startHarness();
    const answers = [await h.agent({ message: "m", idempotencyKey: "k1" })];
    answers.push(...(await Promise.all([h.agent({ message: "m", idempotencyKey: "k1" }), h.agent({ message: "m", idempotencyKey: "k1" })])));
    expect(new Set(answers.map((a) => a.runId)).size).toBe(1);
    expect(answers.map((a) => a.duplicate)).toEqual([false, true, true]);
    await settle();
    expect(h.runs).toHaveLength(1);
    await expect(h.agent({ message: "other", idempotencyKey: "k1" })).rejects.toMatchObject({ code: "CONFLICT" });
    // Scoped per endpoint: the same key on wake is another delivery.
    expect((await h.wake("w", "next-heartbeat", "k1")).duplicate).toBe(false);
  });

  it("concurrent first deliveries: one wins, the others wait for its answer", async () => {
    h = await startHarness();
    const answers = await Promise.all([1, 2, 3].map(() => h!.wake("same", "next-heartbeat", "k2")));
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(await h.service.wake.size()).toBe(1);
  });

  it("a failed acceptance is forgotten, so the sender's retry runs", async () => {
    h = await startHarness();
    h.queue.failures = 1;
    await expect(h.agent({ message: "m", idempotencyKey: "k3" })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect((await h.agent({ message: "m", idempotencyKey: "k3" })).duplicate).toBe(false);
    await until(() => h!.runs.length === 1);
  });

  it("a refused delivery is forgotten body and all, so the sender's corrected retry runs, and then holds the id", async () => {
    h = await startHarness();
    await expect(h.agent({ message: "m", agentId: "nope", idempotencyKey: "k4" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    const corrected = await h.agent({ message: "m", agentId: "ops", idempotencyKey: "k4" });
    expect(corrected.duplicate).toBe(false);
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({ runId: corrected.runId, agentId: "ops" });
    expect(await h.agent({ message: "m", agentId: "ops", idempotencyKey: "k4" })).toMatchObject({ runId: corrected.runId, duplicate: true });
    await expect(h.agent({ message: "m", agentId: "nope", idempotencyKey: "k4" })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});

const ISSUE_EVENT = {
  action: "opened",
  issue: { number: 7, title: "Login fails", user: { login: "octo" }, labels: [{ name: "bug" }] },
  repository: { full_name: "acme/widgets" },
};

const GITHUB = {
  path: "github",
  idempotencyField: "headers.x-github-delivery",
  action: {
    kind: "agent",
    message: "[{{ headers.x-github-event }}] #{{ payload.issue.number }} {{ payload.issue.title }} was {{ payload.action }} by {{ payload.issue.user.login }} ({{ payload.issue.labels[0].name }}{{ payload.issue.milestone.title }})",
    sessionKey: "github:{{ payload.repository.full_name }}",
    channel: "tg",
    to: "@ops",
    name: "GitHub",
  },
};

describe("POST /hooks/<mapping> over the bus", () => {
  it("renders a GitHub issue event into the agent run, missing fields empty", async () => {
    h = await startHarness({ mappings: [GITHUB] });
    const accepted = await h.mapping("github", ISSUE_EVENT, { headers: { "x-github-event": "issues", "x-github-delivery": "d-1" } });
    expect(accepted).toMatchObject({ action: "agent", sessionKey: "github:acme/widgets", duplicate: false });
    await until(() => h!.runs.length === 1);
    expect(h.runs[0]).toMatchObject({
      runId: accepted.runId,
      message: "[issues] #7 Login fails was opened by octo (bug)",
      sender: "GitHub",
      sessionKey: "github:acme/widgets",
      deliver: true,
      messageChannel: "tg",
      to: "@ops",
    });
  });

  it("runs a delivery posted three times with the same id once", async () => {
    h = await startHarness({ mappings: [GITHUB] });
    const headers = { "x-github-event": "issues", "x-github-delivery": "same-id" };
    const answers = [await h.mapping("github", ISSUE_EVENT, { headers })];
    answers.push(await h.mapping("github", ISSUE_EVENT, { headers }), await h.mapping("github", ISSUE_EVENT, { headers }));
    expect(answers.map((a) => [a.runId, a.duplicate])).toEqual([
      [answers[0]!.runId, false],
      [answers[0]!.runId, true],
      [answers[0]!.runId, true],
    ]);
    const another = await h.mapping("github", ISSUE_EVENT, { headers: { ...headers, "x-github-delivery": "other-id" } });
    expect(another.duplicate).toBe(false);
    await until(() => h!.runs.length === 2);
    await settle();
    expect(h.runs.map((r) => r.runId)).toEqual([answers[0]!.runId, another.runId]);
  });

  it("falls back to the Idempotency-Key header when the mapping's field is missing", async () => {
    h = await startHarness({ mappings: [GITHUB] });
    const first = await h.mapping("github", ISSUE_EVENT, { idempotencyKey: "hdr-1" });
    const again = await h.mapping("github", ISSUE_EVENT, { idempotencyKey: "hdr-1" });
    expect([first.duplicate, again.duplicate, again.runId]).toEqual([false, true, first.runId]);
  });

  it("wake mappings queue their text for the main session; the default message is the payload", async () => {
    h = await startHarness({
      mappings: [{ path: "alerts/disk", action: { kind: "wake", message: "disk {{ payload.host }} at {{ query.level }}%", wakeMode: "next-heartbeat" } }, { path: "raw", action: { kind: "agent" } }],
    });
    expect(await h.mapping("alerts/disk", { host: "db1" }, { query: { level: "93" } })).toMatchObject({ action: "wake", wakeMode: "next-heartbeat" });
    await h.mapping("raw", { a: [1, 2] });
    await h.service.heartbeat.beat();
    await until(() => h!.runs.length === 2);
    expect(h.runs.map((r) => r.message.replace(/^Heartbeat.*\n\[.*?\] /, ""))).toEqual(expect.arrayContaining(['{"a":[1,2]}', "hooks/alerts/disk: disk db1 at 93%"]));
    expect(h.runs.find((r) => r.sender === "raw")).toMatchObject({ deliver: false, sessionKey: expect.stringMatching(/^hook:/) });
  });

  it("refuses unknown paths, bodies that render an empty message or a bad session key", async () => {
    h = await startHarness({ mappings: [GITHUB, { path: "note", action: { kind: "wake", message: "{{ payload.text }}" } }] });
    await expect(h.mapping("nope", {})).rejects.toMatchObject({ code: "NOT_FOUND", message: "no hook at /hooks/nope" });
    await expect(h.mapping("note", { other: 1 })).rejects.toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("is empty") });
    await expect(h.mapping("github", { issue: {} })).rejects.toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("sessionKey:") });
    await settle();
    expect(h.runs).toEqual([]);
  });

  it("stops at start on a broken template, naming its key", async () => {
    await expect(startHarness({ mappings: [{ path: "x", action: { kind: "wake", message: "{{ payload.a" } }] })).rejects.toThrow(
      'hooks.mappings[0].action.message: "{{" at character 1 is never closed with "}}"',
    );
  });
});
