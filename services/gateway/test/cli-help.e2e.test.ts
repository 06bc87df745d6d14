import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { freePort } from "@gw/testing";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/context.js";
import { buildProgram } from "../src/cli/program.js";
import { runCli } from "./fixtures/cli.js";
import { ROOT } from "./fixtures/processes.js";

/** The commands (23 §1): each must exist, whatever else the CLI grows. */
const REQUIRED = [
  "start",
  "health",
  "status",
  "agents list",
  "agent",
  "runs follow",
  "runs wait",
  "runs abort",
  "sessions list",
  "sessions preview",
  "sessions patch",
  "sessions reset",
  "sessions delete",
  "sessions compact",
  "send",
  "poll",
  "channels status",
  "pairing list",
  "pairing approve",
  "pairing reject",
  "devices list",
  "devices pending",
  "devices approve",
  "devices reject",
  "devices rotate",
  "devices revoke",
  "config check",
  "config print",
];

/** Every command path of the program, groups included (the program's own list, not a copy). */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.filter((c) => c.name() !== "help").flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

const silentIo: CliIo = {
  stdout: { write: () => true },
  stderr: { write: () => true },
  env: {},
  interactive: false,
  confirm: async () => false,
  onInterrupt: () => () => {},
  outcome: { exitCode: 0, serving: false },
};
const COMMANDS = [[], ...commandPaths(buildProgram(silentIo))];

const dir = mkdtempSync(join(tmpdir(), "gw-cli-help-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each command is a Node process loading the CLI through tsx: seconds each on a busy machine.
describe("gateway CLI without a gateway", { timeout: 240_000 }, () => {
  it("has every command the issue names", () => {
    const paths = COMMANDS.map((path) => path.join(" "));
    for (const name of REQUIRED) expect(paths, name).toContain(name);
  });

  it("answers --help for every command with exit 0, its usage and an example", async () => {
    // Four at a time: each is a Node process loading the CLI.
    for (let i = 0; i < COMMANDS.length; i += 4) {
      await Promise.all(
        COMMANDS.slice(i, i + 4).map(async (command) => {
          const res = await runCli([...command, "--help"]);
          const name = ["gateway", ...command].join(" ");
          expect(res.code, name).toBe(0);
          expect(res.stdout, name).toContain(`Usage: ${name}`);
          expect(res.stdout, name).toMatch(/Examples:\n {2}\$ gateway /);
        }),
      );
    }
  });

  it("exits 2 on a usage error, with the reason on stderr and nothing on stdout", async () => {
    for (const args of [["bogus"], ["sessions"], ["agent"], ["runs", "follow"], ["sessions", "list", "--limit", "many"], ["agent", "-m", "x", "--thinking", "lots"], ["status", "--url", "ftp://x"]]) {
      const res = await runCli(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).not.toBe("");
      expect(res.stdout, args.join(" ")).toBe("");
    }
    const res = await runCli(["send", "--to", "x"]);
    expect(res).toMatchObject({ code: 2, stderr: expect.stringContaining("give --message, --media or both") });
  });

  it("exits 3 when no gateway answers at the address, for WebSocket commands and for health", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const status = await runCli(["status", "--json"], { GATEWAY_URL: url });
    expect(status.code).toBe(3);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: false, exitCode: 3, error: { code: "UNREACHABLE" } });
    expect(status.stderr).toContain(`cannot reach the gateway at ${url.replace("http", "ws")}/ (from GATEWAY_URL)`);
    const health = await runCli(["health", "--url", url]);
    expect(health.code).toBe(3);
    expect(health.stdout).toBe("");
  });

  it("runs as `npx gateway` from the checkout (package.json bin)", async () => {
    const res = await runCli(["--version"], {}, { bin: ["npx", "--no-install", "gateway"] });
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("config print shows the effective config with every secret masked; --as loads it as that service does", async () => {
    const path = join(dir, "print.json5");
    writeFileSync(
      path,
      `{ gateway: { auth: { token: "\${PRINT_TOKEN}" } },
         models: { providers: { oa: { kind: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: "\${PRINT_KEY}" } } },
         agents: { list: [{ id: "main", name: "Main", model: "oa/gpt" }] },
         channels: { tg: { kind: "telegram", botToken: "123456:bot-secret-value", webhookSecret: "hook-secret-value" } },
         redis: { url: "redis://:redis-secret-value@127.0.0.1:6379" } }`,
    );
    const env = { PRINT_TOKEN: "token-secret-value", PRINT_KEY: "sk-secret-value" };
    const res = await runCli(["config", "print", "--config", path, "--json"], env);
    expect(res.code, res.stderr).toBe(0);
    for (const secret of ["token-secret-value", "sk-secret-value", "bot-secret-value", "hook-secret-value", "redis-secret-value"]) {
      expect(res.stdout).not.toContain(secret);
    }
    const printed = JSON.parse(res.stdout) as Record<string, Record<string, unknown>>;
    expect(printed.gateway).toMatchObject({ port: 18789, auth: { token: "********" } });
    expect(printed.channels!.tg).toMatchObject({ kind: "telegram", botToken: "********", webhookSecret: "********" });
    expect(printed.redis!.url).toBe("redis://********@127.0.0.1:6379");

    // As the edge: no provider or channel variable needed, and those sections are not shown.
    const asEdge = await runCli(["config", "print", "--config", path, "--as", "edge"], { PRINT_TOKEN: "token-secret-value" });
    expect(asEdge.code, asEdge.stderr).toBe(0);
    expect(asEdge.stdout).not.toContain("token-secret-value");
    expect(asEdge.stdout).toContain('"token": "********"');
    const missing = await runCli(["config", "print", "--config", path], { PRINT_TOKEN: "x" });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("PRINT_KEY");
    expect((await runCli(["config", "print", "--config", path, "--as", "gateway"], env)).code).toBe(2);
  });

  it("config check --json reports one document; a wrong file is exit 1 naming the key", async () => {
    const placeholders = parseEnv(readFileSync(`${ROOT}config/gateway.example.env`, "utf8")) as Record<string, string>;
    const good = await runCli(["config", "check", "--config", `${ROOT}config/gateway.example.json5`, "--as", "edge", "--json"], placeholders);
    expect(good.code, good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, as: "edge", agents: expect.any(Number) });
    const bad = join(dir, "bad.json5");
    writeFileSync(bad, `{ gateway: { port: "eighty" } }`);
    const refused = await runCli(["config", "check", "--config", bad, "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { code: "INVALID_CONFIG", message: expect.stringContaining("gateway.port") } });
  });
});
