import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envForConfig, freePort } from "@gw/testing";
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
  it("accepts the example config", async () => {
    const example = `${ROOT}config/gateway.example.json5`;
    const res = await runToExit(CLI, ["config", "check", "--config", example], envForConfig(example));
    expect(res.output).toMatch(/OK/);
    expect(res.code).toBe(0);
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
