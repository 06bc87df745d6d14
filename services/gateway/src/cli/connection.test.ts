import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { normaliseUrl, resolveTarget } from "./connection.js";
import { CliError } from "./exit-codes.js";

const dir = mkdtempSync(join(tmpdir(), "gw-cli-conn-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("normaliseUrl", () => {
  it("takes ws, wss, http and https bases, with or without a path", () => {
    expect(normaliseUrl("http://127.0.0.1:18789")).toEqual({ url: "ws://127.0.0.1:18789/", httpUrl: "http://127.0.0.1:18789" });
    expect(normaliseUrl("wss://gw.example.org/")).toEqual({ url: "wss://gw.example.org/", httpUrl: "https://gw.example.org" });
    expect(normaliseUrl("https://gw.example.org/gateway/")).toEqual({ url: "wss://gw.example.org/gateway/", httpUrl: "https://gw.example.org/gateway" });
  });

  it("refuses anything else as a usage error", () => {
    for (const bad of ["ftp://x", "not a url", "127.0.0.1:18789"]) {
      expect(() => normaliseUrl(bad), bad).toThrow(CliError);
      try {
        normaliseUrl(bad);
      } catch (err) {
        expect((err as CliError).exitCode).toBe(2);
      }
    }
  });
});

describe("resolveTarget", () => {
  const config = join(dir, "gw.json5");
  writeFileSync(config, `{ gateway: { bind: "0.0.0.0", port: 19999, auth: { token: "\${CLI_TEST_TOKEN}" } }, models: { providers: { x: { kind: "openai", baseUrl: "http://127.0.0.1:1", apiKey: "\${UNSET_KEY}" } } } }`);

  it("prefers flags, then the environment, then the config file, then the default address", () => {
    expect(resolveTarget({ url: "http://a:1", token: "flag" }, { GATEWAY_URL: "http://b:2", GATEWAY_TOKEN: "env" })).toMatchObject({
      url: "ws://a:1/",
      auth: { token: "flag" },
      source: "--url",
    });
    expect(resolveTarget({}, { GATEWAY_URL: "http://b:2", GATEWAY_PASSWORD: "pw" })).toMatchObject({ url: "ws://b:2/", auth: { password: "pw" }, source: "GATEWAY_URL" });
    expect(resolveTarget({ config }, { CLI_TEST_TOKEN: "from-config" })).toMatchObject({ url: "ws://127.0.0.1:19999/", auth: { token: "from-config" }, source: config });
    expect(resolveTarget({}, { GATEWAY_CONFIG: config, CLI_TEST_TOKEN: "t", GATEWAY_TOKEN: "env" })).toMatchObject({ url: "ws://127.0.0.1:19999/", auth: { token: "env" } });
    const fallback = resolveTarget({}, {});
    expect(fallback).toMatchObject({ url: "ws://127.0.0.1:18789/", source: "the default address" });
    expect(fallback.auth).toBeUndefined();
  });

  it("reads only the gateway section of the config: another section's unset variable does not matter", () => {
    expect(() => resolveTarget({ config }, { CLI_TEST_TOKEN: "t" })).not.toThrow();
  });

  it("makes a config it cannot read a usage error naming the file", () => {
    expect(() => resolveTarget({ config: join(dir, "missing.json5") }, {})).toThrow(/missing\.json5/);
    expect(() => resolveTarget({ config }, {})).toThrow(/CLI_TEST_TOKEN/);
  });
});
