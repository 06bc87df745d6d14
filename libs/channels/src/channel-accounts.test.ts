import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configIssuesOf } from "./contract-helpers.js";
import { parseChannelAccounts, resolveAccounts } from "./channel-accounts.js";
import { COMMON_SETTINGS, E164, httpUrl, nonEmpty } from "./channel-settings.js";

/** Settings as a plugin declares them; each platform's own are tested in its plugin's folder. */
const BotSettings = z.strictObject({
  ...COMMON_SETTINGS,
  botToken: nonEmpty("botToken"),
  apiBaseUrl: httpUrl("apiBaseUrl").default("https://api.example.test"),
});
const PhoneSettings = z.strictObject({
  ...COMMON_SETTINGS,
  bridgeUrl: httpUrl("bridgeUrl"),
  number: z.string().regex(E164, "number must be an E.164 phone number such as +15550001111"),
});

const issuesOf = configIssuesOf;

describe("resolveAccounts", () => {
  it("makes a channel without accounts one account named default", () => {
    expect(resolveAccounts({ kind: "telegram", botToken: "t1", apiBaseUrl: "http://x" })).toEqual([
      { accountId: "default", settings: { botToken: "t1", apiBaseUrl: "http://x" } },
    ]);
  });

  it("lists accounts in file order, channel keys applying to each unless the account sets its own", () => {
    const accounts = resolveAccounts({
      kind: "telegram",
      apiBaseUrl: "http://shared",
      dmPolicy: "open",
      groups: { requireMention: false },
      accounts: {
        support: { botToken: "t-support" },
        alerts: { botToken: "t-alerts", dmPolicy: "disabled", groups: {} },
      },
    });
    expect(accounts).toEqual([
      {
        accountId: "support",
        settings: { apiBaseUrl: "http://shared", dmPolicy: "open", groups: { requireMention: false }, botToken: "t-support" },
      },
      // An account's object replaces the channel's whole: the merge is shallow.
      { accountId: "alerts", settings: { apiBaseUrl: "http://shared", dmPolicy: "disabled", groups: {}, botToken: "t-alerts" } },
    ]);
  });

  it("refuses an empty or malformed accounts map", () => {
    for (const accounts of [{}, [], "a", null]) {
      expect(issuesOf(() => resolveAccounts({ kind: "slack", accounts }, "channels.s"))).toEqual([
        { path: "channels.s.accounts", message: "expected an object with at least one account, e.g. { main: { ... } }" },
      ]);
    }
  });

  it("refuses bad account ids, non-object accounts and channel-only keys on an account", () => {
    const issues = issuesOf(() =>
      resolveAccounts(
        { kind: "telegram", accounts: { Bad: {}, "7": {}, fine: "x", other: { kind: "slack", accounts: {} } } },
        "channels.t",
      ),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      // Integer-like keys come first in a JavaScript object, whatever the file says.
      "channels.t.accounts.7",
      "channels.t.accounts.Bad",
      "channels.t.accounts.fine",
      "channels.t.accounts.other.kind",
      "channels.t.accounts.other.accounts",
    ]);
    expect(issues[0]!.message).toMatch(/must not be a bare number/);
    expect(issues[2]!.message).toBe("expected an object of this account's settings");
  });
});

describe("parseChannelAccounts", () => {
  it("validates and fills defaults per account", () => {
    const [account] = parseChannelAccounts("tg", { kind: "telegram", botToken: "123:abc" }, BotSettings);
    expect(account).toEqual({
      accountId: "default",
      settings: { botToken: "123:abc", apiBaseUrl: "https://api.example.test", dmPolicy: "pairing", allowFrom: [] },
    });
  });

  it("trims a trailing slash off base URLs", () => {
    const [account] = parseChannelAccounts(
      "wa",
      { kind: "whatsapp", botToken: "t", apiBaseUrl: "http://127.0.0.1:9/v21.0/" },
      BotSettings,
    );
    expect(account!.settings.apiBaseUrl).toBe("http://127.0.0.1:9/v21.0");
  });

  it("reports every problem of every account at the path where it can be fixed", () => {
    const issues = issuesOf(() =>
      parseChannelAccounts(
        "ops",
        {
          kind: "telegram",
          apiBaseUrl: "ftp://nope",
          accounts: { alerts: { botToken: "t" }, support: { botTokn: "t" } },
        },
        BotSettings,
      ),
    );
    expect(issues).toEqual([
      { path: "channels.ops.apiBaseUrl", message: "apiBaseUrl must be an http(s) URL" },
      {
        path: "channels.ops.accounts.support.botToken",
        message: "is required (expected string; set it on the channel or on the account)",
      },
      { path: "channels.ops.accounts.support.botTokn", message: "unknown key" },
    ]);
  });

  it("names the channel's own key paths for a channel without accounts", () => {
    const issues = issuesOf(() =>
      parseChannelAccounts("sig", { kind: "signal", bridgeUrl: "http://127.0.0.1:8080", number: "5550001111" }, PhoneSettings),
    );
    expect(issues).toEqual([
      { path: "channels.sig.number", message: "number must be an E.164 phone number such as +15550001111" },
    ]);
  });

  it("checks nested keys and list entries with their full path", () => {
    const issues = issuesOf(() =>
      parseChannelAccounts(
        "tg",
        { kind: "telegram", botToken: "t", allowFrom: ["1", ""], groups: { requireMention: "yes" } },
        BotSettings,
      ),
    );
    expect(issues.map((issue) => issue.path)).toEqual(["channels.tg.allowFrom[1]", "channels.tg.groups.requireMention"]);
  });

  it("gives two accounts their own credentials and the channel's shared keys", () => {
    const accounts = parseChannelAccounts(
      "ops",
      { kind: "discord", apiBaseUrl: "http://127.0.0.1:1/api/v10", accounts: { a: { botToken: "A" }, b: { botToken: "B" } } },
      BotSettings,
    );
    expect(accounts.map((a) => [a.accountId, a.settings.botToken, a.settings.apiBaseUrl])).toEqual([
      ["a", "A", "http://127.0.0.1:1/api/v10"],
      ["b", "B", "http://127.0.0.1:1/api/v10"],
    ]);
  });
});
