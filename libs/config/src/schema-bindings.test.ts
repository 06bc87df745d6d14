import { describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";
import { parseConfig } from "./parse-config.js";

const base = {
  agents: { default: "main", list: [{ id: "main", name: "Main", model: "builtin/echo" }, { id: "support", name: "Support", model: "builtin/echo" }] },
  channels: {
    tg: { kind: "telegram", botToken: "t" },
    slack: { kind: "slack", accounts: { work: { botToken: "b" }, home: { botToken: "c" } } },
  },
};

function issuesOf(bindings: unknown): Array<{ path: string; message: string }> {
  try {
    parseConfig(JSON.stringify({ ...base, bindings }), { env: {} });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues;
  }
}

describe("bindings section", () => {
  it("defaults to none and accepts bindings that name what exists", () => {
    expect(parseConfig(JSON.stringify(base), { env: {} }).bindings).toEqual([]);
    const config = parseConfig(
      JSON.stringify({
        ...base,
        bindings: [
          { match: { channel: "tg", peer: "123" }, agentId: "support", dmPolicy: "open" },
          { match: { channel: "tg", accountId: "default", group: "-5" }, agentId: "main" },
          { match: { channel: "slack", accountId: "home" }, agentId: "support" },
        ],
      }),
      { env: {} },
    );
    expect(config.bindings.map((b) => b.agentId)).toEqual(["support", "main", "support"]);
    expect(config.bindings[0]?.dmPolicy).toBe("open");
  });

  it("refuses an unknown channel, account or agent with the key path", () => {
    expect(issuesOf([{ match: { channel: "nope" }, agentId: "ghost" }])).toEqual([
      { path: "bindings[0].agentId", message: '"ghost" is not an agent in agents.list' },
      { path: "bindings[0].match.channel", message: '"nope" is not a configured channel' },
    ]);
    expect(issuesOf([{ match: { channel: "slack", accountId: "default" }, agentId: "main" }])).toEqual([
      { path: "bindings[0].match.accountId", message: 'channel "slack" has no account "default" (accounts: work, home)' },
    ]);
    expect(issuesOf([{ match: { channel: "tg", accountId: "work" }, agentId: "main" }])[0]?.path).toBe("bindings[0].match.accountId");
  });

  it("refuses a queue that is not a queue object, unknown keys, bad policies and empty ids", () => {
    const issues = issuesOf([
      { match: { channel: "tg" }, agentId: "main", queue: "collect" },
      { match: { channel: "tg", user: "1" }, agentId: "main" },
      { match: { channel: "tg", peer: " " }, agentId: "main", dmPolicy: "everyone" },
    ]);
    expect(issues.map((i) => i.path).sort()).toEqual(["bindings[0].queue", "bindings[1].match.user", "bindings[2].dmPolicy", "bindings[2].match.peer"]);
    expect(issues.find((i) => i.path === "bindings[0].queue")?.message).toMatch(/object/);
  });

  it("takes a queue with its defaults, and refuses bad modes, caps and drops and unknown queue keys", () => {
    expect(issuesOf([{ match: { channel: "tg" }, agentId: "main", queue: { mode: "collect" } }])).toEqual([]);
    const issues = issuesOf([
      { match: { channel: "tg", peer: "1" }, agentId: "main", queue: { mode: "batch" } },
      { match: { channel: "tg", peer: "2" }, agentId: "main", queue: { cap: 0, drop: "newest" } },
      { match: { channel: "tg", peer: "3" }, agentId: "main", queue: { mode: "steer", debounceMs: 5 } },
    ]);
    expect(issues.map((i) => i.path).sort()).toEqual(["bindings[0].queue.mode", "bindings[1].queue.cap", "bindings[1].queue.drop", "bindings[2].queue.debounceMs"]);
  });

  it("refuses a binding that can never answer", () => {
    expect(
      issuesOf([
        { match: { channel: "tg", peer: "1" }, agentId: "main" },
        { match: { channel: "tg", peer: "1" }, agentId: "support" },
      ]),
    ).toEqual([{ path: "bindings[1]", message: expect.stringContaining("never answers: bindings[0]") }]);
  });
});
