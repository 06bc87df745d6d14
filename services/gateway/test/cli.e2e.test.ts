import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { freePort } from "@gw/testing";
import { afterAll, describe, expect, it } from "vitest";
import {
  ROOT,
  runToExit,
  type ServiceProcess,
  spawnService,
  waitHealthy,
  waitOutput,
} from "./fixtures/processes.js";
import { WsClient } from "./fixtures/ws-client.js";

const CLI = "services/gateway/src/cli.ts";
const dir = mkdtempSync(join(tmpdir(), "gw-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("gateway start without a config file", () => {
  let proc: ServiceProcess | undefined;
  afterAll(async () => {
    await proc?.stop();
  });

  it("listens on loopback with agent main on builtin/echo and prints a working token", async () => {
    const port = await freePort();
    proc = spawnService("gateway", CLI, ["start", "--port", String(port)], { GATEWAY_CONFIG: "" }, dir);
    const [, token] = await waitOutput(proc, /token: (\S+)/);
    expect(proc.output()).toContain(`listening on ws://127.0.0.1:${port}`);
    expect(proc.output()).toMatch(/agent main \(default\): model builtin\/echo/);
    expect(proc.output()).toContain(`web chat: http://127.0.0.1:${port}/chat#token=${token}`);
    await waitHealthy(proc, `http://127.0.0.1:${port}`);

    const client = await WsClient.open(`ws://127.0.0.1:${port}/`, { localAddress: "127.0.0.30" });
    expect((await client.connect("wrong")).error?.code).toBe("UNAUTHORIZED");
    expect((await client.connect(token)).ok).toBe(true);
    expect((await client.request("agents.list")).payload?.agents).toEqual([
      expect.objectContaining({ id: "main", model: "builtin/echo" }),
    ]);
    client.close();
  });

  it("exits cleanly on SIGTERM", async () => {
    await proc!.stop();
    expect(proc!.child.exitCode).toBe(0);
  });
});

describe("gateway config check", () => {
  it("accepts the example config with the placeholder secrets of config/gateway.example.env, as the README shows", async () => {
    const example = `${ROOT}config/gateway.example.json5`;
    const placeholders = parseEnv(readFileSync(`${ROOT}config/gateway.example.env`, "utf8")) as Record<string, string>;
    const res = await runToExit(CLI, ["config", "check", "--config", example], placeholders);
    expect(res.output).toMatch(/OK/);
    expect(res.code).toBe(0);
  });

  it("runs the checks the services make at start, and names every key path at once", async () => {
    const path = join(dir, "start-checks.json5");
    writeFileSync(
      path,
      `{ gateway: { dataDir: ${JSON.stringify(join(dir, "data"))} },
         channels: { tg: { kind: "telegram", botToken: "1:x", agent: "nosuch" },
                     ops: { kind: "telegram", accounts: { a: { botToken: "1:y", agent: "ghost" } } } },
         hooks: { enabled: true, token: "t", mappings: [{ path: "gh", action: { kind: "wake", message: "{{ nope.x }}" } }] } }`,
    );
    const res = await runToExit(CLI, ["config", "check", "--config", path]);
    expect(res.code).toBe(1);
    expect(res.output).toContain(`invalid config (${path})`);
    expect(res.output).toContain('channels.tg.agent: names agent "nosuch", which is not in agents.list (main)');
    expect(res.output).toContain('channels.ops.accounts.a.agent: names agent "ghost"');
    expect(res.output).toContain('hooks.mappings[0].action.message: at character 1: "nope.x" must start with payload, headers, query');
    expect(res.output).not.toContain("OK");

    // What the check refuses is what stops the start.
    const start = await runToExit(CLI, ["start", "--config", path, "--port", "0"]);
    expect(start.code).toBe(1);
    expect(start.output).toContain("channels.tg.agent");
  });

  it("refuses a WhatsApp or Signal allowFrom entry that is not a phone number", async () => {
    const path = join(dir, "allow-from.json5");
    writeFileSync(
      path,
      `{ channels: { wa: { kind: "whatsapp", accessToken: "t", phoneNumberId: "1", allowFrom: ["15550001111", "alice"] },
                     sig: { kind: "signal", bridgeUrl: "http://127.0.0.1:8080", number: "+15550001111", allowFrom: ["@bob"] } } }`,
    );
    const res = await runToExit(CLI, ["config", "check", "--config", path]);
    expect(res.code).toBe(1);
    expect(res.output).toContain('channels.wa.allowFrom[1]: "alice" is not an E.164 phone number');
    expect(res.output).toContain('channels.sig.allowFrom[0]: "@bob" is not an E.164 phone number');
  });

  it("checks a YAML file the same way, naming the line and column of a syntax error", async () => {
    const ok = join(dir, "gateway.yaml");
    writeFileSync(ok, `channels:\n  tg:\n    kind: telegram\n    botToken: \${TG_TOKEN}\n    agent: main\n`);
    const good = await runToExit(CLI, ["config", "check", "--config", ok], { TG_TOKEN: "1:x" });
    expect(good.output).toMatch(/gateway\.yaml: OK \(1 agent\(s\), default "main"; 1 channel\(s\), 1 account\(s\)\)/);
    expect(good.code).toBe(0);

    const bad = join(dir, "bad.yml");
    writeFileSync(bad, "gateway:\n  port: 1\n  port: 2\n");
    const res = await runToExit(CLI, ["config", "check", "--config", bad]);
    expect(res.code).toBe(1);
    expect(res.output).toContain("gateway.port: YAML syntax error at line 3, column 3: Map keys must be unique");
  });

  it("names the bad key path and exits 1", async () => {
    const typo = join(dir, "typo.json5");
    writeFileSync(typo, `{ gateway: { port: "x" } }`);
    const first = await runToExit(CLI, ["config", "check", "--config", typo]);
    expect(first.code).toBe(1);
    expect(first.output).toContain("gateway.port");

    const provider = join(dir, "provider.json5");
    writeFileSync(provider, `{ agents: { list: [{ id: "main", name: "Main", model: "nowhere/model" }] } }`);
    const second = await runToExit(CLI, ["config", "check", "--config", provider]);
    expect(second.code).toBe(1);
    expect(second.output).toContain("agents.list[0].model");

    const channel = join(dir, "channel.json5");
    writeFileSync(channel, `{ channels: { tg: { kind: "telegram", botToken: "1:x", apiBaseUrl: "ftp://nowhere" }, sms: { kind: "pager" } } }`);
    const third = await runToExit(CLI, ["config", "check", "--config", channel]);
    expect(third.code).toBe(1);
    expect(third.output).toMatch(/channels\.(tg\.apiBaseUrl|sms\.kind)/);
  });

  it("names a missing environment variable", async () => {
    const path = join(dir, "env.json5");
    writeFileSync(path, `{ gateway: { auth: { token: "\${NOT_SET_ANYWHERE_42}" } } }`);
    const res = await runToExit(CLI, ["config", "check", "--config", path]);
    expect(res.code).toBe(1);
    expect(res.output).toMatch(/gateway\.auth\.token.*NOT_SET_ANYWHERE_42/);
  });
});
