import { describe, expect, it } from "vitest";
import { type BindingMatch, bindingFor, overlappingBindings, type RouteTarget, unreachableBindings } from "./binding-match.js";

const dm: RouteTarget = { channelId: "tg", accountId: "default", chat: "100", chatType: "direct", sender: "100" };
const group: RouteTarget = { channelId: "tg", accountId: "default", chat: "-500", chatType: "group", sender: "100" };
const rules = (...matches: BindingMatch[]) => matches.map((match, i) => ({ match, agentId: `a${i}` }));

describe("bindingFor", () => {
  it("falls back to the channel's agent (undefined) when nothing matches", () => {
    expect(bindingFor(rules({ channel: "slack" }, { channel: "tg", peer: "999" }), dm)).toBeUndefined();
    expect(bindingFor([], dm)).toBeUndefined();
  });

  it("prefers peer over thread over group over account over channel, whatever the order", () => {
    const all = rules(
      { channel: "tg" },
      { channel: "tg", accountId: "default" },
      { channel: "tg", group: "-500" },
      { channel: "tg", thread: "7" },
      { channel: "tg", peer: "-500" },
    );
    expect(bindingFor(all, { ...group, threadId: "7" })).toBe(4);
    expect(bindingFor(all.slice(0, 4), { ...group, threadId: "7" })).toBe(3);
    expect(bindingFor(all.slice(0, 3), { ...group, threadId: "7" })).toBe(2);
    expect(bindingFor(all.slice(0, 2), group)).toBe(1);
    expect(bindingFor(all.slice(0, 1), group)).toBe(0);
    expect(bindingFor([...all].reverse(), { ...group, threadId: "7" })).toBe(0);
  });

  it("gives a tie to the first listed", () => {
    expect(bindingFor(rules({ channel: "tg", accountId: "default", peer: "100" }, { channel: "tg", peer: "100" }), dm)).toBe(0);
    expect(bindingFor(rules({ channel: "tg", peer: "100" }, { channel: "tg", accountId: "default", peer: "100" }), dm)).toBe(0);
  });

  it("matches a peer given as the chat id or as the user id of a direct chat", () => {
    const slackDm: RouteTarget = { channelId: "slack", accountId: "default", chat: "D1", chatType: "direct", sender: "U7" };
    expect(bindingFor(rules({ channel: "slack", peer: "D1" }), slackDm)).toBe(0);
    expect(bindingFor(rules({ channel: "slack", peer: "u7" }), slackDm)).toBe(0);
    expect(bindingFor(rules({ channel: "slack", peer: "U8" }), slackDm)).toBeUndefined();
  });

  it("does not route a member's group messages by a user-id peer", () => {
    expect(bindingFor(rules({ channel: "tg", peer: "100" }), group)).toBeUndefined();
    expect(bindingFor(rules({ channel: "tg", peer: "-500" }), group)).toBe(0);
  });

  it("matches a group binding in that group only, never in a direct chat with the same id", () => {
    expect(bindingFor(rules({ channel: "tg", group: "-500" }), group)).toBe(0);
    expect(bindingFor(rules({ channel: "tg", group: "100" }), dm)).toBeUndefined();
    expect(bindingFor(rules({ channel: "tg", group: "-501" }), group)).toBeUndefined();
  });

  it("matches a thread binding only inside that thread", () => {
    const inThread = { ...group, threadId: "42" };
    expect(bindingFor(rules({ channel: "tg", thread: "42" }), inThread)).toBe(0);
    expect(bindingFor(rules({ channel: "tg", thread: "42" }), group)).toBeUndefined();
    expect(bindingFor(rules({ channel: "tg", group: "-500", thread: "43" }), inThread)).toBeUndefined();
  });

  it("keeps accounts apart", () => {
    expect(bindingFor(rules({ channel: "tg", accountId: "alerts" }), dm)).toBeUndefined();
    expect(bindingFor(rules({ channel: "tg", accountId: "alerts" }), { ...dm, accountId: "alerts" })).toBe(0);
  });
});

describe("unreachableBindings", () => {
  it("reports a later binding with the same match", () => {
    expect(unreachableBindings(rules({ channel: "tg", peer: "1" }, { channel: "tg", peer: "1" }))).toEqual([
      { index: 1, message: expect.stringContaining("bindings[0] matches every message it matches") },
    ]);
  });

  it("reports a later binding of the same level that an earlier, broader one covers", () => {
    const problems = unreachableBindings(rules({ channel: "tg", peer: "1" }, { channel: "tg", accountId: "b", peer: "1" }));
    expect(problems.map((p) => p.index)).toEqual([1]);
  });

  it("reports a group binding whose peer is not the group", () => {
    expect(unreachableBindings(rules({ channel: "tg", group: "-5", peer: "1" }))).toEqual([{ index: 0, message: expect.stringContaining("never matches") }]);
    expect(unreachableBindings(rules({ channel: "tg", group: "-5", peer: "-5" }))).toEqual([]);
  });

  it("accepts a narrower binding listed before a broader one, and different levels", () => {
    expect(unreachableBindings(rules({ channel: "tg", accountId: "b", peer: "1" }, { channel: "tg", peer: "1" }))).toEqual([]);
    expect(unreachableBindings(rules({ channel: "tg" }, { channel: "tg", peer: "1" }, { channel: "tg", group: "-5" }))).toEqual([]);
    expect(unreachableBindings(rules({ channel: "tg", peer: "1" }, { channel: "slack", peer: "1" }))).toEqual([]);
  });
});

describe("overlappingBindings", () => {
  it("reports two bindings of one level that can both match a message", () => {
    const problems = overlappingBindings(rules({ channel: "tg", accountId: "b", peer: "1" }, { channel: "tg", peer: "1" }));
    expect(problems).toEqual([{ index: 1, message: expect.stringContaining("overlaps bindings[0] (both peer bindings)") }]);
    const threads = overlappingBindings(rules({ channel: "tg", group: "-5", thread: "9" }, { channel: "tg", accountId: "x", thread: "9" }));
    expect(threads.map((p) => p.index)).toEqual([1]);
  });

  it("leaves out disjoint bindings, different levels and the unreachable ones", () => {
    expect(overlappingBindings(rules({ channel: "tg", peer: "1" }, { channel: "tg", peer: "2" }))).toEqual([]);
    expect(overlappingBindings(rules({ channel: "tg", peer: "1" }, { channel: "tg", group: "-5" }))).toEqual([]);
    expect(overlappingBindings(rules({ channel: "tg", peer: "1" }, { channel: "tg", peer: "1" }))).toEqual([]);
  });
});
