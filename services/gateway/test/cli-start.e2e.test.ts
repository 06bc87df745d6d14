import { freePort } from "@gw/testing";
import { afterAll, describe, expect, it } from "vitest";
import { type CliProcess, cliJson, runCli, spawnCli } from "./fixtures/cli.js";

describe("npm start is the binary's start", { timeout: 120_000 }, () => {
  let started: CliProcess | undefined;
  afterAll(() => {
    if (started?.child.exitCode === null) started.child.kill("SIGKILL");
  });

  it("prints the banner on stderr, serves the CLI's commands, and stops with no process left when npm is signalled", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    started = spawnCli(["--port", String(port)], { GATEWAY_CONFIG: "" }, { bin: ["npm", "start", "--"], timeoutMs: 110_000 });
    const [, token] = await started.waitFor("stderr", /token: (\S+)/, 60_000);
    expect(started.stderr()).toContain(`listening on ws://127.0.0.1:${port}`);
    expect(started.stdout()).not.toContain("listening on ws://");
    expect(started.stdout()).not.toContain(token);

    expect(await cliJson(["health"], { GATEWAY_URL: url })).toMatchObject({ ok: true });
    expect(await cliJson(["agents", "list", "--token", token!], { GATEWAY_URL: url })).toMatchObject({ defaultAgentId: "main" });

    started.child.kill("SIGTERM");
    await started.exited;
    // npm runs `exec node bin/gateway.mjs start`: the signal reached the gateway itself, which
    // shut down (not an orphan still listening once npm is gone).
    expect(started.stdout()).toContain("shutdown complete");
    const after = await runCli(["health", "--url", url]);
    expect(after.code).toBe(3);
  });
});
