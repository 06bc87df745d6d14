import { ConfigError, defaultConfig } from "@gw/config";
import { describe, expect, it } from "vitest";
import { checkHookMappings } from "./mapping-table.js";

const mappingsOf = (actions: Array<{ message?: string; sessionKey?: string }>) =>
  defaultConfig({ hooks: { mappings: actions.map((action, i) => ({ path: `m${i}`, action: { kind: "agent", ...action } })) } }).hooks.mappings;

describe("checkHookMappings (what the hooks service compiles at start, and gateway config check)", () => {
  it("passes good templates", () => {
    expect(() => checkHookMappings(mappingsOf([{ message: "{{ payload.a }}", sessionKey: "gh:{{ headers.x-id }}" }]))).not.toThrow();
  });

  it("names every broken template at its key path", () => {
    let error: unknown;
    try {
      checkHookMappings(mappingsOf([{ message: "ok" }, { message: "{{ nope.x }}", sessionKey: "a:{{ payload.b" }]));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { path: "hooks.mappings[1].action.message", message: 'at character 1: "nope.x" must start with payload, headers, query (e.g. payload.issue.title)' },
      { path: "hooks.mappings[1].action.sessionKey", message: '"{{" at character 3 is never closed with "}}"' },
    ]);
  });
});
