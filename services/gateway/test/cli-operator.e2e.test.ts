import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitRunEvent } from "./fixtures/agent-runs.js";
import { cliJson, runCli, runCliOnTerminal, spawnCli } from "./fixtures/cli.js";
import { askToPair, pairResult } from "./fixtures/devices.js";
import { delivered } from "./fixtures/inbound.js";
import { MODES, TOKEN } from "./fixtures/gateway.js";
import { type OperatorGateway, startOperatorGateway } from "./fixtures/operator.js";
import { type ServiceProcess, spawnService, waitHealthy } from "./fixtures/processes.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * The real `gateway` binary against a real gateway in both modes: every operator command, its
 * --json document, exit codes, and the approvals an operator makes (issue 23 §1).
 */
describe.each(MODES)("gateway CLI against a gateway (%s)", { timeout: 180_000 }, (mode) => {
  let op: OperatorGateway;
  let env: Record<string, string>;
  /** The edge started in place of a killed one (distributed). */
  let replacement: ServiceProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), `gw-cli-op-${mode}-`));

  beforeAll(async () => {
    op = await startOperatorGateway(mode);
    env = { GATEWAY_URL: op.gw.httpUrl(), GATEWAY_TOKEN: TOKEN };
  });
  afterAll(async () => {
    await replacement?.stop();
    await op?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("health, status and agents list, in words and as --json", async () => {
    expect(await cliJson(["health"], env)).toMatchObject({ ok: true, status: "ok", httpStatus: 200 });
    const status = await cliJson<{ edges: unknown[]; services: Array<{ ready: boolean }>; channels: { channels: number } }>(["status"], env);
    expect(status.edges.length).toBeGreaterThanOrEqual(1);
    expect(status.services.every((s) => s.ready)).toBe(true);
    expect(status.channels.channels).toBe(1);
    const human = await runCli(["status"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/SERVICE\s+READY/);
    expect(human.stdout).toMatch(/agent-runner\s+yes/);
    expect(human.stdout).not.toContain("\u001b[");
    const agents = await cliJson<{ agents: Array<{ id: string }>; defaultAgentId: string }>(["agents", "list"], env);
    expect(agents.agents.map((a) => a.id)).toEqual(["main", "oa"]);
    expect((await runCli(["agents", "list"], env)).stdout).toMatch(/^ID\s+NAME\s+MODEL\s+DEFAULT/);
    expect(await cliJson(["agents", "show", "oa"], env)).toMatchObject({ id: "oa", name: "OpenAI agent" });
    expect((await runCli(["agents", "show"], env)).stdout).toMatch(/^Main \(main\)\nEcho\n$/);
  });

  it("agent streams the answer with its tool call, and --json gives the final payloads and the tools", async () => {
    const streamed = await runCli(["agent", "--agent", "oa", "--session", `cli:tools-${mode}`, "-m", "tools:time__now please"], env);
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(streamed.stdout).toMatch(/⚙ time\.now \{.*\}\n {2}↳ time\.now \{.*"content".*\}\nTools said: 1 results\n$/s);
    expect(streamed.stderr).toMatch(/run [\w-]+ on session cli:tools-/);

    const json = await cliJson<{ payloads: unknown[]; tools: unknown[] }>(["agent", "--agent", "oa", "--session", `cli:tools-json-${mode}`, "-m", "tools:time__now again"], env);
    expect(json.payloads).toEqual([{ type: "text", text: "Tools said: 1 results" }]);
    expect(json.tools).toEqual([expect.objectContaining({ name: "time.now", input: {}, result: expect.objectContaining({ content: expect.anything() }) })]);
  });

  it("Ctrl-C while an answer streams aborts the run (chat.abort) and exits 130; runs follow, wait and list see it ended", async () => {
    const proc = spawnCli(["agent", "--agent", "oa", "--session", `cli:slow-${mode}`, "-m", "slow please"], env);
    const [, runId] = await proc.waitFor("stderr", /run ([\w-]+) on session/);
    // Streamed as it is written: words are on the terminal while the run still goes on.
    await proc.waitFor("stdout", /w2 /);
    const inFlight = await cliJson<{ runs: Array<{ runId: string; status: string }> }>(["runs", "list"], env);
    expect(inFlight.runs).toContainEqual(expect.objectContaining({ runId, status: "running" }));
    proc.child.kill("SIGINT");
    const res = await proc.exited;
    expect(res.code).toBe(130);
    expect(res.stderr).toContain(`aborting run ${runId}`);
    expect(res.stdout).not.toContain("w39");

    const waited = await runCli(["runs", "wait", runId!, "--json"], env);
    expect(waited.code).toBe(1);
    expect(JSON.parse(waited.stdout)).toMatchObject({ completed: true, status: "error", error: { code: "ABORTED" } });
    const followed = await runCli(["runs", "follow", runId!, "--json"], env);
    expect(followed.code).toBe(1);
    expect(JSON.parse(followed.stdout)).toMatchObject({ runId, status: "error", end: { phase: "error", code: "ABORTED", aborted: true }, text: expect.stringMatching(/^w0 w1 w2 /) });
    expect((await cliJson<{ runs: Array<{ runId: string }> }>(["runs", "list"], env)).runs.map((r) => r.runId)).not.toContain(runId);
  });

  it("runs follow replays a finished run (and resumes after --after-seq); runs wait prints its answer; runs abort of an ended run says so", async () => {
    const answered = await cliJson<{ runId: string }>(["agent", "--session", `cli:echo-${mode}`, "-m", "echo me"], env);
    const followed = await runCli(["runs", "follow", answered.runId], env);
    expect(followed).toMatchObject({ code: 0, stdout: "echo me\n" });
    const resumed = await cliJson<{ lastSeq: number; text: string }>(["runs", "follow", answered.runId, "--after-seq", "1"], env);
    expect(resumed.text).toBe("echo me");
    expect(resumed.lastSeq).toBeGreaterThan(1);
    expect(await runCli(["runs", "wait", answered.runId], env)).toMatchObject({ code: 0, stdout: "echo me\n" });
    expect(await cliJson(["runs", "abort", answered.runId], env)).toMatchObject({ runId: answered.runId, aborted: false });
    const unknown = await runCli(["runs", "follow", "no-such-run"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: NOT_FOUND");
  });

  it("sessions list, preview, patch, compact, reset and delete", async () => {
    const key = `cli:sessions-${mode}`;
    await cliJson(["agent", "--session", key, "-m", "first words"], env);
    const listed = await cliJson<{ sessions: Array<{ key: string }>; total: number }>(["sessions", "list", "--limit", "500"], env);
    expect(listed.sessions.map((s) => s.key)).toContain(key);
    expect((await runCli(["sessions", "list", "--agent", "main"], env)).stdout).toMatch(/^KEY\s+AGENT\s+MODEL\s+MESSAGES\s+UPDATED/);
    const preview = await cliJson<{ messages: Array<{ body: string }> }>(["sessions", "preview", key, "--limit", "5"], env);
    expect(preview.messages.map((m) => m.body)).toEqual(["first words", "first words"]);
    expect((await runCli(["sessions", "preview", key], env)).stdout).toMatch(/user: first words\n.*Main: first words/);
    // A message's images show after its text (never their bytes).
    const pictured = `cli:images-${mode}`;
    const ws = await WsClient.open(op.gw.wsUrl());
    try {
      await ws.connect(TOKEN);
      const image = { type: "image", mimeType: "image/png", data: Buffer.from("89504e470d0a1a0a", "hex").toString("base64") };
      expect((await ws.request("agent", { message: "a picture", sessionKey: pictured, attachments: [image] }, 20_000)).ok).toBe(true);
    } finally {
      ws.close();
    }
    expect((await runCli(["sessions", "preview", pictured], env)).stdout).toMatch(/user: a picture \[image: image\/png, 8 bytes\]/);
    expect(await cliJson(["sessions", "patch", key, "--agent", "oa", "--thinking", "high"], env)).toMatchObject({ key, updated: true });
    expect(await cliJson(["sessions", "preview", key], env)).toMatchObject({ agentId: "oa" });
    expect(await cliJson(["sessions", "compact", key], env)).toMatchObject({ key, beforeSize: expect.any(Number) });
    // No terminal here: reset and delete do not ask.
    expect(await cliJson(["sessions", "reset", key], env)).toMatchObject({ key, reset: true });
    expect(await cliJson(["sessions", "delete", key, "--yes"], env)).toMatchObject({ key, deleted: true });
    const gone = await runCli(["sessions", "preview", key, "--json"], env);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout)).toMatchObject({ ok: false, exitCode: 1, error: { code: "NOT_FOUND" } });
    expect(gone.stderr).toMatch(/^error: NOT_FOUND: /);
  });

  it("on a terminal: delete asks first (no changes nothing, yes deletes), and colour is on unless NO_COLOR", async () => {
    const key = `cli:terminal-${mode}`;
    await cliJson(["agent", "--session", key, "-m", "keep me"], env);
    const declined = await runCliOnTerminal(["sessions", "delete", key], env, "n\n");
    expect(declined.code).toBe(1);
    expect(declined.stdout).toContain(`Delete session ${key}? This cannot be undone. [y/N]`);
    expect(declined.stdout).toContain("cancelled; nothing changed");
    expect(await cliJson(["sessions", "preview", key], env)).toMatchObject({ key });
    const confirmed = await runCliOnTerminal(["sessions", "delete", key], env, "y\n");
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain(`deleted ${key}`);
    expect((await runCli(["sessions", "preview", key], env)).code).toBe(1);

    expect((await runCliOnTerminal(["status"], env, "")).stdout).toContain("\u001b[32myes\u001b[39m");
    expect((await runCliOnTerminal(["status"], { ...env, NO_COLOR: "1" }, "")).stdout).not.toContain("\u001b[");
  });

  it("send and poll reach the platform; a generated idempotency key is printed and a repeat with it sends nothing", async () => {
    const sent = await runCli(["send", "--channel", "tg", "--to", "7015", "--message", "from the cli", "--json"], env);
    expect(sent.code, sent.stderr).toBe(0);
    const key = /idempotency key: (\S+)/.exec(sent.stderr)?.[1];
    const receipt = JSON.parse(sent.stdout) as { idempotencyKey: string; messageId: string };
    expect(receipt.idempotencyKey).toBe(key);
    expect(op.telegram.delivered.filter((d) => d.chat === "7015" && d.text === "from the cli")).toHaveLength(1);
    const again = await runCli(["send", "--channel", "tg", "--to", "7015", "--message", "from the cli", "--idempotency-key", key!], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already sent with this idempotency key");
    expect(op.telegram.delivered.filter((d) => d.chat === "7015" && d.text === "from the cli")).toHaveLength(1);

    const polled = await cliJson<{ messageId: string }>(["poll", "--channel", "tg", "--to", "7015", "--question", "Lunch?", "--option", "Pizza", "--option", "Salad", "--multi"], env);
    expect(polled.messageId).toEqual(expect.any(String));
    const tooFew = await runCli(["poll", "--channel", "tg", "--to", "7015", "--question", "Q?", "--option", "only"], env);
    expect(tooFew.code).toBe(1);
    expect(tooFew.stderr).toContain("error: INVALID_REQUEST");
  });

  it("channels status, and a real pending Telegram sender listed, approved and answered; another rejected", async () => {
    const status = await cliJson<{ channels: Array<{ id: string; accounts: unknown[] }> }>(["channels", "status"], env);
    expect(status.channels).toEqual([expect.objectContaining({ id: "tg", kind: "telegram", accounts: [expect.objectContaining({ accountId: "default" })] })]);

    const code = await op.strangerWrites(7011, "hello, may I?");
    const listed = await cliJson<{ requests: Array<{ code: string; sender: string }> }>(["pairing", "list", "--channel", "tg"], env);
    expect(listed.requests).toContainEqual(expect.objectContaining({ code, sender: "7011" }));
    expect((await runCli(["pairing", "list"], env)).stdout).toContain(code);
    const approved = await runCli(["pairing", "approve", "tg", code.toLowerCase()], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("approved Person7011 (7011) on tg");
    await op.personWrites(7011, "now answer me");
    await delivered(op.telegram, (d) => d.chat === "7011" && d.text === "now answer me");
    await op.strangerWrites(7012, "me too").then(async (other) => {
      expect(await cliJson(["pairing", "reject", "tg", other], env)).toMatchObject({ rejected: true, sender: "7012" });
    });
    expect((await cliJson<{ requests: unknown[] }>(["pairing", "list"], env)).requests).toEqual([]);
    const unknown = await runCli(["pairing", "approve", "tg", "NOPE-NOPE"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: NOT_FOUND");
  });

  it("a real device pairing: pending --watch prints it as it arrives, approve sends the token; list, rotate, revoke, reject", async () => {
    const watch = spawnCli(["devices", "pending", "--watch", "--json"], env);
    await watch.waitFor("stderr", /waiting for pairing requests/);
    const asking = await askToPair(op.gw.wsUrl(), { deviceId: `cli-speaker-${mode}`, localAddress: "127.0.0.71" });
    expect(asking.answer.ok, JSON.stringify(asking.answer.error)).toBe(true);
    const [line] = await watch.waitFor("stdout", /^\{.*\}$/m);
    expect(JSON.parse(line)).toMatchObject({ requestId: asking.requestId, deviceId: `cli-speaker-${mode}` });
    watch.child.kill("SIGINT");
    expect((await watch.exited).code).toBe(0);

    const pending = await cliJson<{ requests: Array<{ requestId: string }> }>(["devices", "pending"], env);
    expect(pending.requests.map((r) => r.requestId)).toContain(asking.requestId);
    expect(await cliJson(["devices", "approve", asking.requestId!], env)).toMatchObject({ status: "approved" });
    const result = await pairResult(asking.client);
    expect(result).toMatchObject({ status: "approved", token: expect.any(String) });
    asking.client.close();

    const devices = await cliJson<{ devices: Array<{ deviceId: string }> }>(["devices", "list"], env);
    expect(devices.devices.map((d) => d.deviceId)).toContain(`cli-speaker-${mode}`);
    const rotated = await runCli(["devices", "rotate", `cli-speaker-${mode}`], env);
    expect(rotated.code).toBe(0);
    const newToken = rotated.stdout.trim().split("\n").at(-1)!;
    const device = await WsClient.open(op.gw.wsUrl(), { localAddress: "127.0.0.72" });
    expect((await device.request("connect", { role: "node", auth: { token: String(result.token) } })).error?.code).toBe("UNAUTHORIZED");
    expect((await device.request("connect", { role: "node", auth: { token: newToken } })).ok).toBe(true);
    expect(await cliJson(["devices", "revoke", `cli-speaker-${mode}`], env)).toMatchObject({ revoked: true });
    expect((await device.waitClosed()).code).toBe(4001);

    const declined = await askToPair(op.gw.wsUrl(), { deviceId: `cli-declined-${mode}`, localAddress: "127.0.0.73" });
    expect(await cliJson(["devices", "reject", declined.requestId!], env)).toMatchObject({ status: "rejected" });
    expect(await pairResult(declined.client)).toMatchObject({ status: "rejected" });
    declined.client.close();
  });

  it("connects from a config file (address and token), and exits 4 on a wrong token", async () => {
    const config = join(dir, "local.json5");
    writeFileSync(config, JSON.stringify({ gateway: { bind: "127.0.0.1", port: Number(new URL(op.gw.httpUrl()).port), auth: { token: TOKEN } } }));
    expect(await cliJson(["agents", "list", "--config", config])).toMatchObject({ defaultAgentId: "main" });
    const wrong = await runCli(["status", "--token", "not-the-token", "--url", op.gw.httpUrl()], {}, {});
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain("error: UNAUTHORIZED");
    const wrongJson = await runCli(["sessions", "list", "--json"], { ...env, GATEWAY_TOKEN: "still-wrong" });
    expect(wrongJson.code).toBe(4);
    expect(JSON.parse(wrongJson.stdout)).toMatchObject({ ok: false, exitCode: 4, error: { code: "UNAUTHORIZED" } });
  });

  it.runIf(mode === "distributed")("runs follow resumes after its edge is killed and another takes its place, every word once", async () => {
    const runId = `cli-restart-${mode}`;
    const starter = await WsClient.open(op.gw.wsUrl(), { localAddress: "127.0.0.74" });
    expect((await starter.connect(TOKEN)).ok).toBe(true);
    // Its answer is lost with the edge; the run goes on in the runner.
    const answer = starter.request("agent", { message: "slow across a restart", sessionKey: "cli:restart", agentId: "oa", runId }, 60_000).catch(() => undefined);
    await waitRunEvent(starter, runId, (e) => e.stream === "lifecycle" && e.data.phase === "start");
    const follow = spawnCli(["runs", "follow", runId], env);
    await follow.waitFor("stdout", /w1 /);
    const { port } = op.gw.edges[0]!;
    await op.gw.edges[0]!.proc.kill("SIGKILL");
    await follow.waitFor("stderr", /connection lost; resuming run/);
    replacement = spawnService("edge-0b", "services/edge/src/main.ts", ["--config", op.gw.configPath, "--port", String(port)], {
      E2E_GATEWAY_TOKEN: TOKEN,
      EDGE_ID: "e2e0b",
    });
    await waitHealthy(replacement, op.gw.httpUrl());
    const res = await follow.exited;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "));
    starter.close();
    await answer;
  });

  // Last: it blocks this machine's address on this gateway for a minute.
  it("exits 4 when the gateway blocks the address after too many failed attempts", async () => {
    const guesser = await WsClient.open(op.gw.wsUrl());
    for (let i = 0; i < 25 && guesser.closed === undefined; i++) {
      if ((await guesser.connect(`guess-${i}`)).error?.code === "RATE_LIMITED") break;
    }
    guesser.close();
    const blocked = await runCli(["status"], env);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toContain("error: RATE_LIMITED");
  });
});
